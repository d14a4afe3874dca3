"""The lab server of docker-compose.yml as one compose project: Docker made available, the base
images found (official, pulled, or the local stand-ins where no registry answers), the image
built, the project started, waited for, inspected and torn down. Shell-level only: what the
deploy test does to the stack, never what it asks the API."""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
LOOPBACK_FILE = Path(__file__).with_name("compose.loopback.yml")
SHARED_DOCKER = REPO.parent / "shared" / "docker"

# The stand-in of each official base image (../shared/docker/build-base-images tags them).
STAND_INS = {
    "PYTHON_IMAGE": "tcplab-local/python:3.11-bookworm",
    "RUST_IMAGE": "tcplab-local/rust:bookworm",
    "POSTGRES_IMAGE": "tcplab-local/postgres:15",
    "REDIS_IMAGE": "tcplab-local/redis:7",
    "FLOWER_IMAGE": "tcplab-local/flower:2.0",
}
_START = time.monotonic()


class DeployError(RuntimeError):
    """The stack could not be built, started or inspected (as opposed to a failed check)."""


def say(message: str) -> None:
    print(f"[{time.monotonic() - _START:7.1f}s] {message}", flush=True)


def sh(*args: str, timeout: float | None = None, check: bool = True, env: dict[str, str] | None = None) -> str:
    """Run a command, return its stdout; DeployError with its stderr when it fails."""
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        raise DeployError(f"{' '.join(args)}: no answer within {timeout:g} s") from e
    if check and done.returncode != 0:
        raise DeployError(f"{' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def ok(*args: str, timeout: float = 60) -> bool:
    try:
        return subprocess.run(args, capture_output=True, timeout=timeout).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def ensure_docker() -> None:
    """A daemon that answers and the Compose v2 plugin; installs both with
    ../shared/docker/install-docker when that script is there."""
    if ok("docker", "info") and ok("docker", "compose", "version"):
        return
    installer = SHARED_DOCKER / "install-docker"
    if not installer.exists():
        raise DeployError(
            "Docker (a running daemon and the Compose v2 plugin) is needed: https://docs.docker.com/engine/install/"
        )
    say(f"no Docker daemon or Compose v2 here: {installer}")
    subprocess.run([str(installer)], check=True)


def official_images() -> dict[str, str]:
    """VARIABLE -> default, for every `${X_IMAGE:-default}` of docker-compose.yml: the file
    stays the one place that names the official images."""
    found = dict(re.findall(r"\$\{([A-Z_]+_IMAGE):-([^}]+)\}", COMPOSE_FILE.read_text()))
    found.pop("TCPLAB_IMAGE", None)  # the image this file builds, not a base
    if set(found) != set(STAND_INS):
        raise DeployError(f"docker-compose.yml's base-image variables {sorted(found)} != {sorted(STAND_INS)}")
    return found


def base_images() -> dict[str, str]:
    """The image each variable names for this run: the caller's setting, else the official
    image if Docker has it or can pull it, else its local stand-in (built when missing)."""
    chosen: dict[str, str] = {}
    missing: list[str] = []
    for var, official in official_images().items():
        if os.environ.get(var):
            chosen[var] = os.environ[var]
        elif ok("docker", "image", "inspect", official) or ok("docker", "pull", "-q", official, timeout=600):
            chosen[var] = official
        else:
            missing.append(var)
    if missing and not all(ok("docker", "image", "inspect", STAND_INS[v]) for v in missing):
        builder = SHARED_DOCKER / "build-base-images"
        if not builder.exists():
            raise DeployError(f"no registry answers for {missing} and {builder} is not here")
        say(f"no registry answers for {', '.join(missing)}: building the local stand-ins ({builder})")
        subprocess.run([str(builder)], check=True, stdout=subprocess.DEVNULL)
    chosen.update({v: STAND_INS[v] for v in missing})
    return chosen


@dataclass
class Stack:
    """One compose project of docker-compose.yml (plus the loopback override), with its own
    name, ports, secrets and volumes."""

    workdir: Path
    api_port: int
    flower_port: int
    images: dict[str, str]
    settings: dict[str, str] = field(default_factory=dict)
    project: str = field(default_factory=lambda: f"tcplab-deploy-{os.getpid()}-{secrets.token_hex(3)}")
    admin_token: str = field(default_factory=lambda: "tcplab_" + secrets.token_urlsafe(32))
    image: str = "tcplab:deploy-test"

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        values = {
            **self.images,
            "TCPLAB_IMAGE": self.image,
            "TCPLAB_BUILD_NETWORK": os.environ.get("TCPLAB_BUILD_NETWORK", "host"),
            "TCPLAB_PORT": str(self.api_port),
            "FLOWER_PORT": str(self.flower_port),
            "TCPLAB_ADMIN_TOKEN": self.admin_token,
            "POSTGRES_PASSWORD": secrets.token_hex(16),
            **self.settings,
        }
        # Its own env file (not the repository's .env, which is the operator's), and none of
        # this shell's TCPLAB_* settings: compose would prefer them to the file's.
        self.env_file = self.workdir / "compose.env"
        self.env_file.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
        self.env_file.chmod(0o600)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TCPLAB_") and k not in values}

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def _compose_command(self, *args: str) -> list[str]:
        return [
            "docker",
            "compose",
            "--project-name",
            self.project,
            "--env-file",
            str(self.env_file),
            "-f",
            str(COMPOSE_FILE),
            "-f",
            str(LOOPBACK_FILE),
            *args,
        ]

    def compose(self, *args: str, timeout: float | None = 600, check: bool = True) -> str:
        return sh(*self._compose_command(*args), timeout=timeout, check=check, env=self.env)

    # ------------------------------------------------------------------ build and start

    def build(self, log: Path) -> None:
        """`docker compose build` of the tcplab image (api, worker and beat share it), its
        output in ``log`` with a progress line every 30 s; the image it replaces is removed
        (vfs keeps every layer in full)."""
        before = sh("docker", "image", "inspect", "-f", "{{.Id}}", self.image, check=False).strip()
        with open(log, "w") as out:
            process = subprocess.Popen(
                self._compose_command("build", "api"), stdout=out, stderr=subprocess.STDOUT, env=self.env
            )
            last = time.monotonic()
            while process.poll() is None:
                time.sleep(1)
                if time.monotonic() - last >= 30:
                    last = time.monotonic()
                    # BuildKit's "#12 [api build 6/10] RUN …", the legacy builder's "Step 6/19 : RUN …"
                    steps = [
                        ln for ln in log.read_text(errors="replace").splitlines() if re.match(r"(#\d+ \[|Step )", ln)
                    ]
                    say(f"  building: {steps[-1][:110] if steps else '…'}")
        if process.returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
            raise DeployError(f"the image did not build (log: {log}):\n{tail}")
        after = sh("docker", "image", "inspect", "-f", "{{.Id}}", self.image).strip()
        if before and before != after:
            sh("docker", "image", "rm", before, check=False)

    def up(self, workers: int, log: Path) -> subprocess.Popen[bytes]:
        """`docker compose up -d`, in the background: it returns only once every service it
        starts has what it depends on healthy, and wait_healthy reports meanwhile."""
        with open(log, "w") as out:
            return subprocess.Popen(
                self._compose_command("up", "-d", "--no-build", "--pull", "never", "--scale", f"worker={workers}"),
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
            )

    def containers(self) -> list[dict[str, str]]:
        """Every container of the project (running or not): Service, ID, State, Health."""
        out = self.compose("ps", "-a", "--format", "json", timeout=60).strip()
        if not out:
            return []
        if out.startswith("["):
            return json.loads(out)
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def wait_healthy(self, expected: dict[str, int], timeout_s: float, up: subprocess.Popen[bytes]) -> None:
        """Until ``expected`` (service -> containers) are all running and healthy and ``up``
        has returned; a line of progress every 5 s; fails at once when a container exited or
        ``up`` failed."""
        deadline = time.monotonic() + timeout_s
        while True:
            if up.poll():
                raise DeployError(f"docker compose up exited {up.returncode}: see up.log in {self.workdir}")
            rows = [c for c in self.containers() if c["Service"] in expected]
            exited = [c["Name"] for c in rows if c.get("State") in ("exited", "dead")]
            if exited:
                raise DeployError(f"containers exited while starting: {exited}")
            healthy = {
                s: sum(
                    1
                    for c in rows
                    if c["Service"] == s and c.get("State") == "running" and c.get("Health") in ("healthy", "")
                )
                for s in expected
            }
            line = ", ".join(f"{s} {healthy[s]}/{n}" for s, n in expected.items())
            if all(healthy[s] >= n for s, n in expected.items()) and up.poll() == 0:
                say(f"  healthy: {line}")
                return
            if time.monotonic() > deadline:
                raise DeployError(f"not healthy within {timeout_s:g} s: {line}")
            say(f"  waiting for health: {line}")
            time.sleep(5)

    # ------------------------------------------------------------------ faults and reads

    def container_of(self, service: str, hostname: str | None = None) -> str:
        """The id of the service's (only, or ``hostname``'s) running container."""
        ids = [c["ID"] for c in self.containers() if c["Service"] == service and c.get("State") == "running"]
        if hostname is not None:
            ids = [i for i in ids if i.startswith(hostname) or hostname.startswith(i[:12])]
        if len(ids) != 1:
            raise DeployError(
                f"expected one running {service} container{f' {hostname}' if hostname else ''}, found {ids}"
            )
        return ids[0]

    def psql(self, sql: str) -> list[list[str]]:
        """Rows of a query run by psql inside the postgres container (tab-separated)."""
        out = self.compose(
            "exec",
            "-T",
            "postgres",
            "psql",
            "-U",
            "tcplab",
            "-d",
            "tcplab",
            "-v",
            "ON_ERROR_STOP=1",
            "-AtF",
            "\t",
            "-c",
            sql,
            timeout=60,
        )
        return [line.split("\t") for line in out.splitlines() if line]

    # ------------------------------------------------------------------ teardown

    def save_logs(self) -> None:
        try:
            (self.workdir / "compose.log").write_text(
                self.compose("logs", "--no-color", "--timestamps", timeout=120, check=False)
            )
        except DeployError as e:
            say(f"  (logs not saved: {e})")

    def down(self) -> None:
        """`docker compose down -v`: containers, network and volumes gone, and the env file
        with the project's secrets (the image stays: the next run's build cache)."""
        self.compose("down", "-v", "--remove-orphans", "--timeout", "20", timeout=600, check=False)
        self.env_file.unlink(missing_ok=True)


def free_ports(first: int, last: int, count: int) -> list[int]:
    """``count`` ports of [first, last] nobody listens on at 127.0.0.1."""
    found = []
    for port in range(first, last + 1):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                found.append(port)
        if len(found) == count:
            return found
    raise DeployError(f"fewer than {count} free ports in {first}-{last}")
