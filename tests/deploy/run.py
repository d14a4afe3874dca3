"""`make test-deploy`: the lab server of docker-compose.yml, built and run for real, through the
faults a lab server meets — a worker killed mid-run, PostgreSQL and Redis restarted while users
submit and read — and then checked in PostgreSQL: every run stored exactly once, and not one API
answer a 5xx other than the documented 503.

    python -m tests.deploy.run [--keep] [--workers 3]

Installs Docker (../shared/docker/install-docker) and the base images' local stand-ins
(../shared/docker/build-base-images) when they are missing; publishes only on 127.0.0.1, ports
18000-18099; its own compose project, secrets and volumes, torn down at the end whatever
happened (`docker compose down -v`). Build log, compose logs and the report land in
artifacts/deploy/. Not collected by pytest (no test_ prefix): it needs Docker and minutes."""

from __future__ import annotations

import argparse
import json
import secrets
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.deploy.stack import REPO, DeployError, Stack, base_images, ensure_docker, free_ports, say, sh
from tests.deploy.traffic import Api, Load, Monitor, Recorder

SERVICES = ("api", "worker", "beat", "flower", "postgres", "redis")
# About 2-3 s of simulation per run here: the sweep is still running through every fault.
SWEEP = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 2500},
    "axes": [{"path": "flows[*].loss.m", "values": [3, 12, 30]}],
    "replications": 10,
    "seed": 2026,
}
# Every setting is the compose file's default (the broker's visibility timeout of an hour
# included: the killed worker's run goes on by its missing heartbeat, in about half a minute),
# but for the dispatch window, which the file asks to set to the lab's worker processes.
SETTINGS: dict[str, str] = {}


def load_run(seed: int) -> dict[str, Any]:
    return {"preset": "paper000-fig2a", "overrides": {"duration_s": 5, "warmup_s": 1, "seed": 7_000_000 + seed}}


class Report:
    """Timings, the exactly-once accounting and the failed checks, printed and saved."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.facts: dict[str, Any] = {}
        self.failures: list[str] = []

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.timings[name] = round(time.monotonic() - start, 1)
            say(f"{name}: {self.timings[name]:.1f} s")

    def check(self, ok: bool, message: str) -> None:
        if not ok:
            self.failures.append(message)
            say(f"FAILED: {message}")


def create_user(admin: Api, name: str) -> str:
    created = admin.json("POST", "/v1/users", expect=201, json={"name": name})
    if created is None:
        raise DeployError(f"the admin could not create the user {name}")
    return created["token"]["token"] if isinstance(created.get("token"), dict) else created["token"]


def restart(stack: Stack, service: str, admin: Api, monitor: Monitor, report: Report) -> None:
    """`docker restart` of ``service`` while the sweep and the load go on; times until
    /readyz answers 200 again and until a run finishes after the restart began."""
    progress = monitor.view().progress
    report.facts[f"{service}_restart_under"] = {k: progress.get(k) for k in ("queued", "running", "succeeded")}
    (db_start,) = stack.psql("select now()")[0]
    container = stack.container_of(service)
    say(f"restarting {service} (sweep: {progress})")
    start = time.monotonic()
    sh("docker", "restart", "--time", "10", container, timeout=120)
    report.timings[f"{service}_restart_command_s"] = round(time.monotonic() - start, 1)
    deadline = start + 180
    while (r := admin.get("/readyz")) is None or r.status_code != 200:
        if time.monotonic() > deadline:
            raise TimeoutError(f"/readyz not 200 within 180 s of restarting {service}")
        time.sleep(0.2)
    report.timings[f"{service}_restart_to_ready_s"] = round(time.monotonic() - start, 1)
    while int(stack.psql(f"select count(*) from runs where finished_at > '{db_start}'")[0][0]) == 0:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no run finished within 180 s of restarting {service}")
        time.sleep(0.5)
    report.timings[f"{service}_restart_to_first_run_done_s"] = round(time.monotonic() - start, 1)
    say(
        f"  {service}: ready after {report.timings[f'{service}_restart_to_ready_s']} s, "
        f"a run finished after {report.timings[f'{service}_restart_to_first_run_done_s']} s"
    )


def exercise(stack: Stack, recorder: Recorder, report: Report, workers: int, sweep_timeout_s: float) -> dict[str, Any]:
    """Users, the sweep, the load, the three faults; returns what the accounting needs."""
    admin = Api(stack.base_url, stack.admin_token, "admin", recorder)
    suffix = secrets.token_hex(3)
    names = {"sweeper": f"deploy-sweeper-{suffix}", "loader": f"deploy-loader-{suffix}"}
    sweeper_token = create_user(admin, names["sweeper"])
    loader = Load(Api(stack.base_url, create_user(admin, names["loader"]), "loader", recorder), load_run)
    loader.start()
    sweeper = Api(stack.base_url, sweeper_token, "sweeper", recorder)
    sweep = sweeper.json("POST", "/v1/sweeps", expect=201, json=SWEEP)
    if sweep is None:
        raise DeployError("the sweep was not created")
    sweep_start = time.monotonic()
    say(f"sweep {sweep['id']}: {sweep['created']['runs']} runs through {workers} workers")
    monitor = Monitor(Api(stack.base_url, sweeper_token, "monitor", recorder), sweep["id"], sweep_start)
    monitor.start()
    facts = {
        "users": names,
        "sweep_id": sweep["id"],
        "runs": sweep["created"]["runs"],
        "loader": loader,
        "workers": workers,
    }

    # A worker killed mid-run (its newest), once every worker has finished a run: the run it
    # held goes to another.
    victim = monitor.wait(
        f"all {workers} workers to finish a run",
        lambda v: len(v.workers_done) >= workers and v.running and max(v.running, key=lambda r: r["started_at"] or ""),
        timeout_s=300,
        say=say,
    )
    container = stack.container_of("worker", victim["worker"].split("@", 1)[1])
    monitor.watch_id = victim["id"]
    killed_at = time.monotonic()
    sh("docker", "kill", container, timeout=60)
    say(f"killed worker {container[:12]} running run {victim['id']} (attempt {victim['attempts']})")
    facts.update(killed_run=victim["id"], killed_container=container)

    time.sleep(3)
    restart(stack, "postgres", admin, monitor, report)
    restart(stack, "redis", admin, monitor, report)

    monitor.wait("the sweep to finish", lambda v: v.status == "done", timeout_s=sweep_timeout_s, say=say)
    report.timings["sweep_s"] = round(time.monotonic() - sweep_start, 1)
    monitor.stop.set()
    monitor.join()
    watched = monitor.view().watched
    again = next((t for t, status, attempts, _ in watched if attempts > victim["attempts"]), None)
    done = next((t for t, status, _, _ in watched if status == "succeeded"), None)
    if again is not None:
        report.timings["killed_run_taken_again_after_kill_s"] = round(again - (killed_at - sweep_start), 1)
    if done is not None:
        report.timings["killed_run_done_after_kill_s"] = round(done - (killed_at - sweep_start), 1)
    report.facts["killed_run_history"] = [list(w) for w in watched]
    report.facts["killed_container_state"] = sh(
        "docker", "inspect", "-f", "{{.State.Status}} restarts={{.RestartCount}}", container, check=False
    ).strip()

    loader.stop.set()
    loader.join()
    deadline = time.monotonic() + 180
    while int(
        stack.psql(
            f"select count(*) from runs r join users u on u.id = r.owner_id where u.name = '{names['loader']}' and r.status in ('queued', 'running')"
        )[0][0]
    ):
        if time.monotonic() > deadline:
            raise TimeoutError("the load's runs did not finish within 180 s of the sweep")
        time.sleep(1)
    return facts


def account(stack: Stack, facts: dict[str, Any], recorder: Recorder, report: Report) -> None:
    """Exactly once, from PostgreSQL: every run succeeded with its result, one result per cache
    key and none twice; the load's runs are the ones the API said it stored. Then the answers."""
    names = facts["users"]
    owners = f"select id from users where name in ('{names['sweeper']}', '{names['loader']}')"
    rows = stack.psql(
        "select u.name, count(*), count(*) filter (where r.status = 'succeeded'), count(r.result_id),"
        " count(distinct r.cache_key), min(r.attempts), max(r.attempts), count(distinct r.worker)"
        f" from runs r join users u on u.id = r.owner_id where r.owner_id in ({owners}) group by u.name"
    )
    per_user = {
        row[0]: dict(
            zip(
                ("runs", "succeeded", "with_result", "keys", "min_attempts", "max_attempts", "workers"),
                map(int, row[1:]),
                strict=True,
            )
        )
        for row in rows
    }
    attempts = stack.psql(f"select attempts, count(*) from runs where owner_id in ({owners}) group by 1 order by 1")
    (stored,) = stack.psql(
        f"select count(*) from results where cache_key in (select cache_key from runs where owner_id in ({owners}))"
    )[0]
    (doubled,) = stack.psql(
        "select count(*) from (select cache_key from results group by cache_key having count(*) > 1) d"
    )[0]
    (mismatched,) = stack.psql(
        "select count(*) from runs r join results s on s.id = r.result_id where r.cache_key <> s.cache_key"
    )[0]
    (flowless,) = stack.psql(
        "select count(*) from results s where not exists (select 1 from flow_results f where f.result_id = s.id)"
    )[0]
    load_ids = {
        row[0]
        for row in stack.psql(
            f"select r.id from runs r join users u on u.id = r.owner_id where u.name = '{names['loader']}'"
        )
    }
    (killed,) = (
        stack.psql(
            f"select status || ' attempts=' || attempts || ' worker=' || coalesce(worker, '') from runs where id = '{facts['killed_run']}'"
        )[0]
        if "killed_run" in facts
        else ("-",)
    )
    keys = sum(u["keys"] for u in per_user.values())
    report.facts.update(
        per_user=per_user,
        attempts={a: int(n) for a, n in attempts},
        results_stored=int(stored),
        result_keys=keys,
        duplicate_results=int(doubled),
        mismatched_results=int(mismatched),
        results_without_flows=int(flowless),
        load_submitted=len(facts["loader"].submitted),
        load_refused_503=facts["loader"].refused,
        killed_run=killed,
    )
    sweep = per_user.get(names["sweeper"], {})
    load = per_user.get(names["loader"], {})
    report.check(sweep.get("runs") == facts["runs"], f"the sweep has {sweep.get('runs')} runs, not {facts['runs']}")
    for who, row in per_user.items():
        report.check(
            row["succeeded"] == row["runs"] == row["with_result"],
            f"{who}: {row['succeeded']} of {row['runs']} runs succeeded, {row['with_result']} with a result",
        )
        report.check(
            1 <= row["min_attempts"] and row["max_attempts"] <= 3,
            f"{who}: attempts {row['min_attempts']}..{row['max_attempts']}",
        )
    report.check(int(stored) == keys, f"{stored} results stored for {keys} cache keys (one each expected)")
    report.check(
        int(doubled) == 0 and int(mismatched) == 0 and int(flowless) == 0,
        f"results: {doubled} doubled, {mismatched} under another key, {flowless} without flows",
    )
    report.check(
        load_ids == set(facts["loader"].submitted),
        f"the load's stored runs ({len(load_ids)}) are not the {len(facts['loader'].submitted)} answered 201",
    )
    report.check(load.get("runs", 0) >= 30, f"only {load.get('runs', 0)} runs submitted under load")
    report.check(
        sweep.get("workers", 0) >= facts["workers"],
        f"the sweep's runs went through {sweep.get('workers')} workers, not {facts['workers']}",
    )
    report.check(
        killed.startswith("succeeded attempts=2"),
        f"the killed worker's run: {killed} (expected succeeded on its second attempt)",
    )

    report.facts["answers"] = recorder.by_status()
    report.facts["answers_4xx"] = recorder.client_errors()
    report.facts["answers_503"] = sorted({f"{a.method} {a.route}: {a.detail[:80]}" for a in recorder.of_status(503)})
    unexpected = recorder.unexpected()
    report.facts["answers_unexpected"] = [
        f"{a.at_s:.1f}s {a.who} {a.method} {a.route} -> {a.status}: {a.detail}" for a in unexpected[:20]
    ]
    report.check(not unexpected, f"{len(unexpected)} answers were a 5xx other than 503 or no answer at all")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--health-timeout", type=float, default=600, help="seconds for every container to be healthy")
    parser.add_argument(
        "--sweep-timeout", type=float, default=600, help="seconds for the sweep to finish after the faults"
    )
    parser.add_argument("--keep", action="store_true", help="leave the project running (tear down by hand)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a compose variable, over this test's own (e.g. TCPLAB_BROKER_VISIBILITY_TIMEOUT_S=3600)",
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # tear down on SIGTERM as on Ctrl-C

    report = Report()
    workdir = REPO / "artifacts" / "deploy"
    total = time.monotonic()
    try:
        ensure_docker()
        images = base_images()
    except (DeployError, OSError) as e:
        say(f"cannot run: {e}")
        return 2
    api_port, flower_port = free_ports(18000, 18099, 2)
    settings = {**SETTINGS, "TCPLAB_DISPATCH_WINDOW": str(args.workers), **dict(s.split("=", 1) for s in args.set)}
    stack = Stack(workdir, api_port, flower_port, images, settings=settings)
    say(f"project {stack.project}: API {stack.base_url}, base images {images}")
    report.facts["images"] = images
    report.facts["settings"] = settings
    recorder = Recorder(time.monotonic())
    try:
        with report.timed("build_s"):
            stack.build(workdir / "build.log")
        with report.timed("up_to_healthy_s"):
            up = stack.up(args.workers, workdir / "up.log")
            stack.wait_healthy({s: args.workers if s == "worker" else 1 for s in SERVICES}, args.health_timeout, up)
        facts = exercise(stack, recorder, report, args.workers, args.sweep_timeout)
        account(stack, facts, recorder, report)
    except (DeployError, TimeoutError) as e:
        report.failures.append(str(e))
        say(f"FAILED: {e}")
    finally:
        if args.keep:
            say(f"kept: docker compose -p {stack.project} --env-file {stack.env_file} down -v")
        else:
            with report.timed("logs_s"):
                stack.save_logs()
            with report.timed("teardown_s"):
                stack.down()
        report.timings["total_s"] = round(time.monotonic() - total, 1)
        report.facts["failures"] = report.failures
        text = json.dumps({"timings": report.timings, **report.facts}, indent=2, default=str)
        (workdir / "report.json").write_text(text)
        print(text)
    say("PASSED" if not report.failures else f"FAILED ({len(report.failures)}): see above and {workdir}")
    return 0 if not report.failures else 1


if __name__ == "__main__":
    sys.exit(main())
