"""/v1/traces (api/routers/traces.py, services/traces): Mahimahi traces uploaded once and named,
the built-in LTE traces beside them, and runs whose links follow a trace by name — through the
real app, PostgreSQL and a Celery worker. A path is never accepted."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from services.settings import REPO_ROOT
from services.traces.builtin import BUILTIN_DIR, BUILTIN_NAMES
from services.traces.format import parse_trace
from tests.conftest import AUTH
from tests.e2e.test_runs import finished
from tests.support import make_user, user_client

STEADY = b"1\n1\n2\n2\n3\n3\n4\n4\n"  # two opportunities a millisecond: 24 Mb/s


def trace_scenario(name: str, reverse: str | None = None, *, duration_s: float = 4.0) -> dict[str, Any]:
    trace = {"name": name} | ({"reverse_name": reverse} if reverse else {})
    return {
        "duration_s": duration_s,
        "warmup_s": 1.0,
        "topology": {
            "dumbbell": {
                "bottleneck": {"trace": trace, "delay_ms": 10, "queue": {"type": "droptail", "limit_pkts": 500}}
            }
        },
        "flows": [{"name": "bulk", "variant": "cubic", "rtt_ms": 40}],
    }


def put(client: TestClient, name: str, body: bytes) -> Any:
    return client.put(f"/v1/traces/{name}", content=body, headers={"content-type": "text/plain"})


def test_a_trace_is_uploaded_listed_shown_and_deleted_by_name(client) -> None:
    r = put(client, "steady", STEADY)
    assert r.status_code == 201, r.text
    made = r.json()
    assert (made["name"], made["builtin"], made["lines"], made["span_ms"]) == ("steady", False, 8, 4)
    assert made["mean_mbps"] == pytest.approx(24.0)
    listed = client.get("/v1/traces").json()
    assert [t["name"] for t in listed if t["builtin"]] == list(BUILTIN_NAMES)
    assert [t["name"] for t in listed if not t["builtin"]] == ["steady"]
    assert client.get("/v1/traces/steady").json()["sha256"] == made["sha256"]
    assert client.get("/v1/traces/steady/content").text == STEADY.decode()

    again = put(client, "steady", b"5\r\n5\r\n10")  # replaces it, line ends normalised
    assert again.status_code == 201 and again.json()["sha256"] == parse_trace(b"5\n5\n10\n").sha256
    assert client.delete("/v1/traces/steady").status_code == 200
    assert client.get("/v1/traces/steady").status_code == 404
    assert client.delete("/v1/traces/steady").status_code == 404


def test_names_are_per_user_and_built_in_traces_are_everyones_and_read_only(app, client) -> None:
    assert put(client, "mine", STEADY).status_code == 201
    with user_client(app, make_user(client, "dana")) as dana:
        assert dana.get("/v1/traces/mine").status_code == 404
        assert put(dana, "mine", b"7\n").status_code == 201  # her own, same name
        assert dana.get("/v1/traces/mine").json()["lines"] == 1
        shown = dana.get("/v1/traces/Verizon-LTE-short.down").json()
        assert (shown["builtin"], shown["lines"], shown["span_ms"]) == (True, 58655, 140000)
        assert put(dana, "Verizon-LTE-short.down", STEADY).status_code == 409
        assert dana.delete("/v1/traces/Verizon-LTE-short.down").status_code == 409
    assert client.get("/v1/traces/mine").json()["lines"] == 8


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "no delivery opportunities"),
        (b"0\n0\n", "lasts 0 ms"),
        (b"1\n3\n2\n", "line 3: 2 ms is before the line above it"),
        (b"1\n-2\n", "line 2: expected a whole number"),
        (b"1\n2.5\n", "line 2: expected a whole number"),
        (b"1\n\n2\n", "line 2: expected a whole number"),
        (b"1\n/etc/passwd\n", "line 2: expected a whole number"),
        (b"1\n99999999999\n", "line 2: 99999999999 ms is past the largest"),
        ("1\n٣\n".encode(), "a trace is ASCII text"),
    ],
)
def test_a_bad_trace_is_a_422_naming_the_body_and_the_line(client, body: bytes, reason: str) -> None:
    r = put(client, "bad", body)
    assert r.status_code == 422, r.text
    assert reason in r.text and "$.body" in r.text
    assert client.get("/v1/traces/bad").status_code == 404


def test_a_bad_name_is_a_422_naming_the_name(client) -> None:
    r = put(client, ".hidden", STEADY)
    assert r.status_code == 422 and "$.name" in r.text and "trace name" in r.text


@pytest.fixture
def small_quota_client(test_settings, clean_db) -> Iterator[TestClient]:
    from api.main import create_app

    settings = test_settings.model_copy(
        update={"trace_max_bytes": 2048, "user_max_traces": 2, "user_max_trace_bytes": 3000}
    )
    with TestClient(create_app(settings), headers=AUTH) as c:
        yield c


def test_an_oversize_trace_is_refused_while_it_is_read(small_quota_client) -> None:
    big = b"".join(f"{i}\n".encode() for i in range(1, 1000))  # 3.9 kB
    r = put(small_quota_client, "big", big)
    assert r.status_code == 413 and "2048 bytes" in r.json()["detail"] and "TCPLAB_TRACE_MAX_BYTES" in r.text

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(100):
            yield b"1\n" * 100

    chunked = small_quota_client.put("/v1/traces/big", content=chunks(), headers={"content-type": "text/plain"})
    assert chunked.status_code == 413
    assert small_quota_client.get("/v1/traces/big").status_code == 404


def test_a_users_traces_are_held_to_a_count_and_a_byte_quota(small_quota_client) -> None:
    c = small_quota_client
    assert put(c, "a", STEADY).status_code == 201
    assert put(c, "b", STEADY).status_code == 201
    third = put(c, "c", STEADY)
    assert third.status_code == 429 and "TCPLAB_USER_MAX_TRACES" in third.text
    assert put(c, "b", STEADY).status_code == 201  # replacing one is not one more
    assert c.delete("/v1/traces/b").status_code == 200
    long = b"".join(f"{i}\n".encode() for i in range(1, 500))  # 1.9 kB, under the per-file limit
    assert put(c, "b", long).status_code == 201
    assert c.delete("/v1/traces/a").status_code == 200
    too_much = put(c, "a", long)
    assert too_much.status_code == 429 and "TCPLAB_USER_MAX_TRACE_BYTES" in too_much.text


def test_a_scenario_naming_an_unknown_trace_or_a_path_is_a_422_naming_the_field(client) -> None:
    r = client.post("/v1/runs", json={"scenario": trace_scenario("nope")})
    assert r.status_code == 422
    (error,) = r.json()["detail"]
    assert error["path"] == "$.topology.dumbbell.bottleneck.trace.name" and "no trace named 'nope'" in error["msg"]
    r = client.post("/v1/runs", json={"scenario": trace_scenario("TMobile-LTE-short.down", "nope")})
    assert r.status_code == 422 and r.json()["detail"][0]["path"].endswith("trace.reverse_name")
    by_path = trace_scenario("x")
    by_path["topology"]["dumbbell"]["bottleneck"]["trace"] = {"file": "/etc/passwd"}
    r = client.post("/v1/runs", json={"scenario": by_path})
    assert r.status_code == 422 and "trace files are not accepted" in r.text


def test_a_run_over_a_named_trace_carries_its_content_hash_and_completes_through_a_worker(
    client, celery_worker_process
) -> None:
    made = put(client, "steady", STEADY).json()
    run = client.post("/v1/runs", json={"scenario": trace_scenario("steady")})
    assert run.status_code == 201, run.text
    scenario = client.get(f"/v1/runs/{run.json()['id']}/scenario").json()["scenario"]
    assert scenario["topology"]["dumbbell"]["bottleneck"]["trace"] == {"file": f"sha256:{made['sha256']}"}
    done = finished(client, run.json()["id"])
    assert done["status"] == "succeeded", done
    flows = client.get(f"/v1/runs/{done['id']}/result").json()["flows"]
    # The trace's 24 Mb/s, not the access links' 1 Gb/s: the core followed the uploaded content
    # (3 s after a 1 s warm-up, CUBIC's first loss included: the capacity check is below).
    assert 0.8 * 24e6 * 1460 / 1500 < flows[0]["goodput_bps"] <= 24e6 * 1460 / 1500

    # The same content under another name is the same run; other content is another.
    assert put(client, "same", STEADY).status_code == 201
    same = client.post("/v1/runs", json={"scenario": trace_scenario("same")}).json()
    assert same["cache_key"] == run.json()["cache_key"]
    assert put(client, "steady", b"1\n2\n3\n4\n").status_code == 201
    other = client.post("/v1/runs", json={"scenario": trace_scenario("steady")}).json()
    assert other["cache_key"] != run.json()["cache_key"]


def test_the_built_in_traces_are_the_shipped_lte_files_with_their_licence() -> None:
    assert (BUILTIN_DIR / "COPYING.GPL-3").read_text().startswith("                    GNU GENERAL PUBLIC LICENSE")
    assert "Winstein" in (BUILTIN_DIR / "README.mahimahi").read_text()
    for name in BUILTIN_NAMES:
        text = gzip.decompress((BUILTIN_DIR / f"{name}.gz").read_bytes())
        assert parse_trace(text).lines == text.count(b"\n")
    shared = shared_traces()
    if shared is not None:  # the source they were copied from, where it is at hand
        for name in BUILTIN_NAMES:
            assert gzip.decompress((BUILTIN_DIR / f"{name}.gz").read_bytes()) == (shared / name).read_bytes()


def shared_traces() -> Path | None:
    """The shared Mahimahi traces' folder: $TCPLAB_TRACES, or shared/traces/cellular beside the
    repository (as simulator/core/tests/traces.rs finds them); None when they are not there."""
    folder = Path(os.environ.get("TCPLAB_TRACES") or REPO_ROOT.parent / "shared" / "traces" / "cellular")
    return folder if (folder / "README.md").exists() else None


@pytest.mark.parametrize("carrier", ["TMobile-LTE-short", "Verizon-LTE-short", "ATT-LTE-driving"])
def test_a_saturating_cubic_flow_over_an_uploaded_shared_trace_gets_within_a_few_percent_of_its_capacity(
    client, celery_worker_process, carrier: str
) -> None:
    folder = shared_traces()
    if folder is None:
        pytest.skip("the shared Mahimahi traces are not here (set TCPLAB_TRACES to their folder)")
    uploaded = {}
    for direction in ("down", "up"):
        r = put(client, f"shared-{carrier}.{direction}", (folder / f"{carrier}.{direction}").read_bytes())
        assert r.status_code == 201, r.text
        uploaded[direction] = r.json()
    down = parse_trace((folder / f"{carrier}.down").read_bytes())
    assert uploaded["down"]["sha256"] == down.sha256  # the same content as the built-in copy's
    # The cellular study's CUBIC run (60 s, 5 s warm-up, 2000-packet Drop-Tail: CUBIC never idles
    # the link), its link following the uploads instead of the built-in copies.
    names = {
        "topology.dumbbell.bottleneck.trace.name": f"shared-{carrier}.down",
        "topology.dumbbell.bottleneck.trace.reverse_name": f"shared-{carrier}.up",
    }
    run = client.post("/v1/runs", json={"preset": "study-cellular", "overrides": names})
    builtin = client.post("/v1/runs", json={"preset": "study-cellular", "overrides": {"link": carrier}})
    assert builtin.json()["cache_key"] == run.json()["cache_key"]  # the same content: the same run
    assert run.status_code == 201, run.text
    done = finished(client, run.json()["id"])
    assert done["status"] == "succeeded", done
    goodput = client.get(f"/v1/runs/{done['id']}/result").json()["flows"][0]["goodput_bps"]
    capacity = down.capacity_bps(5.0, 60.0) * 1460 / 1500  # what the trace delivers there, payload only
    assert 0.95 * capacity <= goodput <= capacity, (goodput, capacity)


def test_a_sweep_follows_its_owners_trace_and_an_unknown_one_names_the_point(app, client) -> None:
    made = put(client, "steady", STEADY).json()
    names = {
        "topology.dumbbell.bottleneck.trace.name": "steady",
        "topology.dumbbell.bottleneck.trace.reverse_name": "steady",
    }
    spec = {
        "preset": "study-cellular",
        "overrides": {**names, "duration_s": 5.0},
        "axes": [{"path": "flows[*].variant", "values": ["cubic", "vegas"]}],
        "replications": 1,
    }
    sweep = client.post("/v1/sweeps", json=spec)
    assert sweep.status_code == 201, sweep.text
    runs = client.get(f"/v1/sweeps/{sweep.json()['id']}/runs").json()
    for run in runs:
        scenario = client.get(f"/v1/runs/{run['run_id']}/scenario").json()["scenario"]
        trace = scenario["topology"]["dumbbell"]["bottleneck"]["trace"]
        assert trace == {"file": f"sha256:{made['sha256']}", "reverse_file": f"sha256:{made['sha256']}"}
    with user_client(app, make_user(client, "erin")) as erin:  # not hers: the name is unknown to her
        refused = erin.post("/v1/sweeps", json=spec)
    assert refused.status_code == 422 and "no trace named 'steady'" in refused.text


def test_a_queued_run_whose_trace_was_deleted_fails_naming_the_content_it_cannot_read(client, db_session) -> None:
    import tcpsim
    from services.runs import claim

    made = put(client, "gone", b"3\n5\n9\n").json()
    run = client.post("/v1/runs", json={"scenario": trace_scenario("gone")}).json()
    assert client.delete("/v1/traces/gone").status_code == 200
    settings = client.app.state.settings
    scenario = claim(
        db_session,
        run["id"],
        "test",
        settings.model_copy(update={"trace_cache_dir": settings.state_dir / "empty-cache"}),
    )
    db_session.commit()
    assert scenario is not None
    with pytest.raises(tcpsim.ScenarioError) as refused:
        tcpsim.run(scenario)
    assert made["sha256"] in str(refused.value) and refused.value.path == "$.topology.dumbbell.bottleneck.trace.file"
