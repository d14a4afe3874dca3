"""docker-compose.yml and the Dockerfile, checked by reading them (no Docker needed): every
command names a module and options that exist, every COPY source is in the repository, every
base image comes from a variable. `make test-deploy` (tests/deploy/) runs them for real."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
import yaml

from infra.launch import build_parser
from services.settings import REPO_ROOT

COMPOSE = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
TCPLAB_SERVICES = ("api", "worker", "beat")


def _command(service: str) -> list[str]:
    command = SERVICES[service]["command"]
    return shlex.split(command) if isinstance(command, str) else [str(c) for c in command]


def _dockerfile_instructions() -> list[tuple[str, str]]:
    text = (REPO_ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    instructions = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            instructions.append((keyword.upper(), rest.strip()))
    return instructions


def test_the_lab_server_has_its_six_services() -> None:
    assert set(SERVICES) == {"api", "worker", "beat", "postgres", "redis", "flower"}
    for name, service in SERVICES.items():
        assert "healthcheck" in service, f"{name} has no healthcheck"
        assert service["healthcheck"]["test"], name


def test_tcplab_services_reach_postgres_and_redis_by_service_name() -> None:
    for name in TCPLAB_SERVICES:
        env = SERVICES[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgresql://") and "@postgres:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"].startswith("redis://redis:6379")
        assert SERVICES[name]["image"] == "${TCPLAB_IMAGE:-tcplab:latest}"
        assert SERVICES[name]["build"]["context"] == "."
    postgres_env = SERVICES["postgres"]["environment"]
    assert f"{postgres_env['POSTGRES_USER']}:" in SERVICES["api"]["environment"]["DATABASE_URL"]
    assert SERVICES["api"]["environment"]["DATABASE_URL"].endswith("/" + postgres_env["POSTGRES_DB"])


def test_the_worker_scales() -> None:
    worker = SERVICES["worker"]
    assert "container_name" not in worker and "ports" not in worker
    assert worker["depends_on"]["api"]["condition"] == "service_healthy"  # migrated first


@pytest.mark.parametrize("service", TCPLAB_SERVICES)
def test_commands_name_modules_of_the_image(service: str) -> None:
    command = _command(service)
    assert command[:2] == ["python", "-m"]
    module = command[2]
    assert module in ("infra.launch", "celery")
    if module == "celery":
        app = command[command.index("-A") + 1]
        assert app == "worker.app" and importlib.util.find_spec(app) is not None
        assert command[command.index("-A") + 2] in ("worker", "beat")
    else:
        assert importlib.util.find_spec(module) is not None
        build_parser().parse_args(command[3:])  # its options exist
    # The module's top-level package is copied into the image.
    top = ("worker.app" if module == "celery" else module).split(".")[0]
    copied = [rest.split()[0] for kw, rest in _dockerfile_instructions() if kw == "COPY" and "--from" not in rest]
    assert top in copied


def test_the_api_listens_where_its_port_and_healthcheck_say() -> None:
    api = SERVICES["api"]
    assert api["environment"]["TCPLAB_HOST"] == "0.0.0.0"
    container_port = api["environment"]["TCPLAB_PORT"]
    assert any(str(p).endswith(f":{container_port}") for p in api["ports"])
    assert f"127.0.0.1:{container_port}/readyz" in " ".join(api["healthcheck"]["test"])


def test_dockerfile_copy_sources_exist() -> None:
    stages = set()
    copies = 0
    for keyword, rest in _dockerfile_instructions():
        if keyword == "FROM":
            match = re.search(r"\bAS\s+(\S+)", rest, re.IGNORECASE)
            if match:
                stages.add(match.group(1))
        if keyword != "COPY":
            continue
        args = shlex.split(rest)
        options = [a for a in args if a.startswith("--")]
        paths = [a for a in args if not a.startswith("--")]
        sources = paths[:-1]
        from_stage = next((o.split("=", 1)[1] for o in options if o.startswith("--from=")), None)
        if from_stage is not None:
            assert from_stage in stages, f"COPY --from={from_stage}: no such stage"
            continue
        for source in sources:
            copies += 1
            assert (REPO_ROOT / source).exists(), f"COPY {source}: not in the repository"
            assert not _dockerignored(source), f"COPY {source}: excluded by .dockerignore"
    assert copies >= 6


def test_the_image_copies_every_package_of_the_server() -> None:
    """A new top-level package (infra/ was one) left out of the image fails here, not in a
    container that cannot import it."""
    copied = set()
    for keyword, rest in _dockerfile_instructions():
        if keyword == "COPY" and "--from=" not in rest:
            copied.update(a.strip("./") for a in shlex.split(rest)[:-1])
    for package in ("api", "infra", "services", "worker", "migrations"):
        assert package in copied, f"the Dockerfile does not COPY {package}/"


def _dockerignored(source: str) -> bool:
    patterns = [
        line.strip()
        for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return any(Path(source).match(p) or source == p or source.startswith(p + "/") for p in patterns)


def test_the_image_builds_the_core_and_installs_the_locked_dependencies() -> None:
    runs = " ".join(rest for kw, rest in _dockerfile_instructions() if kw == "RUN")
    assert "uv sync --locked --no-dev" in runs and "import tcpsim" in runs
    makefile = (REPO_ROOT / "Makefile").read_text()
    uv_version = re.search(r"UV_VERSION \?= (\S+)", makefile).group(1)
    assert f"ARG UV_VERSION={uv_version}" in (REPO_ROOT / "Dockerfile").read_text()


def test_flower_watches_the_lab_servers_broker_from_this_host_only() -> None:
    flower = SERVICES["flower"]
    assert flower["image"].startswith("${FLOWER_IMAGE:-mher/flower:")
    command = [str(c) for c in flower["command"]]
    assert command[0] == "celery" and "flower" in command
    broker = next(c.split("=", 1)[1] for c in command if c.startswith("--broker="))
    assert broker == SERVICES["api"]["environment"]["REDIS_URL"]  # the tcplab services' Redis
    port = next(c.split("=", 1)[1] for c in command if c.startswith("--port="))
    (published,) = flower["ports"]
    assert published.startswith("127.0.0.1:") and published.endswith(f":{port}")
    assert port in " ".join(flower["healthcheck"]["test"])
    assert flower["depends_on"]["redis"]["condition"] == "service_healthy"
    # Flower sees tasks only when the workers send task events.
    assert "--task-events" in _command("worker") or "-E" in _command("worker")


def test_the_tcplab_services_log_json() -> None:
    for name in TCPLAB_SERVICES:
        assert SERVICES[name]["environment"]["TCPLAB_LOG_FORMAT"].endswith("json}")


def test_the_api_refuses_to_start_without_a_bootstrap_admin_token_and_all_share_one_dispatch_window() -> None:
    # `${VAR:?message}`: compose stops with the message when .env does not set it.
    assert SERVICES["api"]["environment"]["TCPLAB_ADMIN_TOKEN"].startswith("${TCPLAB_ADMIN_TOKEN:?")
    windows = {SERVICES[name]["environment"]["TCPLAB_DISPATCH_WINDOW"] for name in TCPLAB_SERVICES}
    assert windows == {"${TCPLAB_DISPATCH_WINDOW:-4}"}


# The official image each variable defaults to: a mirror or local stand-ins are a setting away,
# and a lab server that sets nothing gets exactly these.
OFFICIAL_IMAGES = {
    "PYTHON_IMAGE": "python:3.11-slim-bookworm",
    "RUST_IMAGE": "rust:1-slim-bookworm",
    "POSTGRES_IMAGE": "postgres:16",
    "REDIS_IMAGE": "redis:7",
    "FLOWER_IMAGE": "mher/flower:2.0",
}
DEFAULTED = re.compile(r"^\$\{([A-Z_]+):-([^}]+)\}$")


def test_every_base_image_comes_from_a_variable_whose_default_is_the_official_image() -> None:
    named: dict[str, str] = {}
    for name, service in SERVICES.items():
        if "build" in service:
            assert isinstance(service["build"], dict), f"{name}: `build: {service['build']}` passes no base images"
            args = service["build"]["args"]
            assert set(args) == {"PYTHON_IMAGE", "RUST_IMAGE"}, name
            for arg, value in args.items():
                variable, default = DEFAULTED.match(value).groups()
                assert variable == arg, f"{name}: build arg {arg} comes from ${{{variable}}}"
                named[variable] = default
        else:
            match = DEFAULTED.match(service["image"])
            assert match, f"{name}: image {service['image']!r} is not a ${{VAR:-default}}"
            named[match.group(1)] = match.group(2)
    assert named == OFFICIAL_IMAGES


def test_the_dockerfile_takes_every_base_image_from_the_build_args_compose_passes() -> None:
    instructions = _dockerfile_instructions()
    arg_defaults = dict(rest.split("=", 1) for kw, rest in instructions if kw == "ARG" and "=" in rest)
    stages: set[str] = set()
    bases = []
    for keyword, rest in instructions:
        if keyword == "FROM":
            image, *alias = rest.split()
            if image not in stages:
                bases.append(image)
            if alias:
                stages.add(alias[-1])
    assert bases and all(re.fullmatch(r"\$\{[A-Z_]+\}", b) for b in bases), f"literal base images: {bases}"
    from_args = {b[2:-1] for b in bases}
    assert from_args == set(SERVICES["api"]["build"]["args"])
    for arg in from_args:
        assert arg_defaults[arg] == OFFICIAL_IMAGES[arg], f"ARG {arg}={arg_defaults[arg]}"


def test_make_test_deploy_runs_the_deploy_test_which_pytest_does_not_collect() -> None:
    from tests.deploy import stack

    makefile = (REPO_ROOT / "Makefile").read_text()
    target = re.search(r"^test-deploy:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert target and "-m tests.deploy.run" in target.group(1)
    assert "test-deploy" in re.search(r"^\.PHONY:(.*)$", makefile, re.MULTILINE).group(1)
    assert "make test-deploy" in (REPO_ROOT / "README.md").read_text()
    deploy = REPO_ROOT / "tests" / "deploy"
    assert (deploy / "run.py").exists()
    assert not [p.name for p in deploy.glob("*.py") if p.name.startswith("test_") or p.name.endswith("_test.py")]
    # It has a stand-in for every base image compose names, and publishes the API on loopback.
    assert stack.official_images() == OFFICIAL_IMAGES and set(stack.STAND_INS) == set(OFFICIAL_IMAGES)
    loopback = yaml.safe_load(stack.LOOPBACK_FILE.read_text().replace("!override", ""))
    assert [p.startswith("127.0.0.1:") for p in loopback["services"]["api"]["ports"]] == [True]
