"""Users, tokens and who sees what, through the real app on the real database.

A second user can neither read nor cancel another's private run or sweep (the API answers 404,
as if it did not exist); a shared one they read but cannot cancel (403); the dashboard pages
follow the same rules with the login cookie.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from sqlalchemy import select, text

from services.db.models import ApiToken, Run
from tests.e2e.test_runs import FIG2_SHORT, count
from tests.support import make_user, user_client

TINY_SWEEP = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 5, "warmup_s": 1},
    "axes": [{"path": "flows[*].loss.m", "values": [1, 8]}],
    "replications": 1,
}


def _v1_get_routes(app: Any) -> list[str]:
    """Every GET route under /v1, its path parameters filled with a random UUID."""
    return [
        re.sub(r"\{[^}]+\}", str(uuid.uuid4()), path)
        for path, operations in app.openapi()["paths"].items()
        if path.startswith("/v1") and "get" in operations
    ]


def test_every_v1_route_needs_a_token_and_the_probes_do_not(app, anonymous_client) -> None:
    paths = _v1_get_routes(app)
    assert len(paths) > 15
    for path in paths:
        r = anonymous_client.get(path)
        assert r.status_code == 401, (path, r.status_code)
        assert r.headers["www-authenticate"] == "Bearer"
        assert "Authorization: Bearer" in r.json()["detail"]
    assert anonymous_client.post("/v1/runs", json=FIG2_SHORT).status_code == 401
    bad = anonymous_client.get("/v1/presets", headers={"Authorization": "Bearer nope"})
    assert (bad.status_code, bad.json()["detail"]) == (401, "the API token is unknown or revoked")
    for probe in ("/healthz", "/readyz", "/metrics", "/openapi.json"):
        assert anonymous_client.get(probe).status_code == 200, probe


def test_tokens_are_shown_once_stored_hashed_and_revocable(app, client, db_session) -> None:
    token = make_user(client, "ada")
    assert token.startswith("tcplab_") and len(token) > 40
    stored = db_session.execute(select(ApiToken.token_hash, ApiToken.prefix)).all()
    assert all(token not in (h, p) for h, p in stored) and token[:13] == stored[0].prefix
    with user_client(app, token) as ada:
        me = ada.get("/v1/me").json()
        assert (me["name"], me["is_admin"], me["queued_runs"]) == ("ada", False, 0)
        second = ada.post("/v1/tokens", json={"name": "laptop"})
        assert second.status_code == 201 and second.json()["token"] != token
        listed = ada.get("/v1/tokens").json()
        assert [t["name"] for t in listed] == ["initial", "laptop"] and all("token" not in t for t in listed)
        assert ada.delete(f"/v1/tokens/{listed[0]['id']}").json()["revoked_at"] is not None
        assert ada.get("/v1/me").status_code == 401  # the token it used is gone at once
    with user_client(app, second.json()["token"]) as laptop:
        assert laptop.get("/v1/me").json()["name"] == "ada"
        assert laptop.get("/v1/users").status_code == 403  # not an admin
        assert laptop.post("/v1/users", json={"name": "eve"}).status_code == 403


def test_admins_manage_users_and_a_disabled_user_is_locked_out(app, client) -> None:
    token = make_user(client, "bob", max_flows=3)
    users = {u["name"]: u for u in client.get("/v1/users").json()}
    assert set(users) == {"admin", "bob"} and users["bob"]["own_quotas"]["max_flows"] == 3
    assert client.post("/v1/users", json={"name": "bob"}).status_code == 409
    bad = client.post("/v1/users", json={"name": "no spaces"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][-1] == "name"
    bob_id = users["bob"]["id"]
    assert client.patch(f"/v1/users/{bob_id}", json={"disabled": True}).json()["disabled"] is True
    with user_client(app, token) as bob:
        r = bob.get("/v1/me")
        assert r.status_code == 401 and "disabled" in r.json()["detail"]
        client.patch(f"/v1/users/{bob_id}", json={"disabled": False, "max_flows": None})
        me = bob.get("/v1/me").json()
        assert me["quotas"]["max_flows"] == app.state.settings.user_max_flows  # back to the default
    me = client.get("/v1/me").json()
    assert client.patch(f"/v1/users/{me['id']}", json={"disabled": True}).status_code == 409


@pytest.fixture
def two_users(app, client) -> Any:
    """(alice, bob): TestClients of two ordinary users."""
    alice = user_client(app, make_user(client, "alice"))
    bob = user_client(app, make_user(client, "bob"))
    with alice, bob:
        yield alice, bob


def test_a_second_user_can_neither_read_nor_cancel_a_private_run(client, two_users) -> None:
    alice, bob = two_users
    run = alice.post("/v1/runs", json=FIG2_SHORT).json()
    assert (run["owner"], run["shared"]) == ("alice", False)
    for path in (f"/v1/runs/{run['id']}", f"/v1/runs/{run['id']}/result", f"/v1/runs/{run['id']}/flows"):
        r = bob.get(path)
        assert r.status_code == 404 and r.json()["detail"] == f"run {run['id']} not found", path
    assert bob.post(f"/v1/runs/{run['id']}/cancel").status_code == 404
    assert bob.patch(f"/v1/runs/{run['id']}", json={"shared": True}).status_code == 404
    assert bob.get("/v1/comparisons/models", params={"run_id": run["id"]}).status_code == 404
    assert bob.get("/v1/runs").json()["total"] == 0
    assert alice.get("/v1/runs").json()["total"] == 1
    assert client.get(f"/v1/runs/{run['id']}").status_code == 200  # an admin sees everything
    assert alice.get(f"/v1/runs/{run['id']}").json()["status"] == "queued"  # nothing changed


def test_a_shared_run_is_read_by_the_lab_and_cancelled_only_by_its_owner_or_an_admin(client, two_users) -> None:
    alice, bob = two_users
    first = alice.post("/v1/runs", json={**FIG2_SHORT, "shared": True}).json()
    second = alice.post("/v1/runs", json={**FIG2_SHORT, "overrides": {**FIG2_SHORT["overrides"], "seed": 2}}).json()
    assert bob.get(f"/v1/runs/{first['id']}").json()["owner"] == "alice"
    refused = bob.post(f"/v1/runs/{first['id']}/cancel")
    assert refused.status_code == 403 and "only the owner" in refused.json()["detail"]
    assert bob.get("/v1/runs").json()["total"] == 1
    assert [r["id"] for r in bob.get("/v1/runs", params={"mine": True}).json()["items"]] == []
    # Alice shares the second later, then cancels the first; an admin cancels the second.
    assert alice.patch(f"/v1/runs/{second['id']}", json={"shared": True}).json()["shared"] is True
    assert bob.get("/v1/runs").json()["total"] == 2
    assert alice.post(f"/v1/runs/{first['id']}/cancel").json()["status"] == "cancelled"
    assert client.post(f"/v1/runs/{second['id']}/cancel").json()["status"] == "cancelled"


def test_sweeps_follow_the_same_rules_and_sharing_a_sweep_shares_its_runs(two_users) -> None:
    alice, bob = two_users
    sweep = alice.post("/v1/sweeps", json=TINY_SWEEP).json()
    assert (sweep["owner"], sweep["shared"]) == ("alice", False)
    base = f"/v1/sweeps/{sweep['id']}"
    for path in (base, f"{base}/points", f"{base}/runs", f"{base}/summary"):
        assert bob.get(path).status_code == 404, path
    assert bob.post(f"{base}/cancel").status_code == 404
    assert bob.post(f"{base}/extend", json={"replications": 2}).status_code == 404
    assert bob.get("/v1/sweeps").json()["total"] == 0
    run_ids = [r["run_id"] for r in alice.get(f"{base}/runs").json()]
    assert all(bob.get(f"/v1/runs/{rid}").status_code == 404 for rid in run_ids)

    assert alice.patch(base, json={"shared": True}).json()["shared"] is True
    assert bob.get(base).status_code == 200
    assert all(bob.get(f"/v1/runs/{rid}").status_code == 200 for rid in run_ids)
    assert bob.post(f"{base}/cancel").status_code == 403
    assert bob.post(f"{base}/extend", json={"replications": 2}).status_code == 403
    assert bob.patch(f"/v1/runs/{run_ids[0]}", json={"shared": False}).status_code == 403
    assert alice.patch(f"/v1/runs/{run_ids[0]}", json={"shared": False}).status_code == 409  # the sweep decides
    assert alice.post(f"{base}/cancel").json()["progress"]["cancelled"] == 2


# ---- quotas and rate limits ------------------------------------------------------------------------


def test_a_scenario_over_the_users_flow_quota_is_a_422_naming_the_field(app, client, db_session) -> None:
    with user_client(app, make_user(client, "small", max_flows=1)) as small:
        r = small.post("/v1/runs", json=FIG2_SHORT)  # two flows
        assert r.status_code == 422
        detail = r.json()["detail"][0]
        assert (detail["type"], detail["path"]) == ("quota.max_flows", "$.overrides")
        assert "at most 1" in detail["msg"]
        r = small.post("/v1/sweeps", json=TINY_SWEEP)
        assert r.status_code == 422 and r.json()["detail"][0]["path"] == "$.axes"
    assert count(db_session, Run) == 0


def test_queued_runs_past_the_users_quota_are_429_and_nothing_is_stored(app, client, db_session) -> None:
    with user_client(app, make_user(client, "busy", max_queued_runs=2)) as busy:
        for seed in (1, 2):
            body = {**FIG2_SHORT, "overrides": {**FIG2_SHORT["overrides"], "seed": seed}}
            assert busy.post("/v1/runs", json=body).status_code == 201
        r = busy.post("/v1/runs", json={**FIG2_SHORT, "overrides": {**FIG2_SHORT["overrides"], "seed": 3}})
        assert r.status_code == 429 and "quota of 2" in r.json()["detail"] and "retry-after" in r.headers
        assert busy.post("/v1/sweeps", json=TINY_SWEEP).status_code == 429
        assert busy.get("/v1/me").json()["queued_runs"] == 2
    assert count(db_session, Run) == 2
    # Another user's queue is their own.
    assert client.post("/v1/runs", json=FIG2_SHORT).status_code == 201


def test_submissions_past_the_users_rate_are_429_with_retry_after(app, client, db_session) -> None:
    with user_client(app, make_user(client, "eager", submissions_per_minute=3)) as eager:
        codes = [eager.post("/v1/runs", json=FIG2_SHORT).status_code for _ in range(3)]
        refused = eager.post("/v1/runs", json=FIG2_SHORT)
        # The window may turn over between the calls: then one more is allowed, never fewer.
        if refused.status_code == 201:
            refused = eager.post("/v1/runs", json=FIG2_SHORT)
        assert codes == [201, 201, 201]
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60 and "3 times per minute" in refused.json()["detail"]
        assert eager.get("/v1/runs").status_code == 200  # reading is not limited
    assert client.post("/v1/runs", json=FIG2_SHORT).status_code == 201  # nor are others


# ---- the dashboard -----------------------------------------------------------------------------------


def test_the_dashboard_sends_a_browser_without_a_cookie_to_login(anonymous_client) -> None:
    r = anonymous_client.get("/dashboard/regions?rtt_s=0.1", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login?next=%2Fdashboard%2Fregions%3Frtt_s%3D0.1"
    page = anonymous_client.get(r.headers["location"])
    assert (
        page.status_code == 200
        and 'id="login-form"' in page.text
        and '"next": "/dashboard/regions?rtt_s=0.1"' in page.text
    )
    # Never an open redirect.
    assert '"next": "/dashboard"' in anonymous_client.get("/login?next=//evil.example/").text


def test_login_sets_an_httponly_strict_cookie_and_the_pages_follow_visibility(app, client, anonymous_client) -> None:
    alice_token = make_user(client, "alice")
    bob_token = make_user(client, "bob")
    with user_client(app, alice_token) as alice:
        run_id = alice.post("/v1/runs", json=FIG2_SHORT).json()["id"]
    assert anonymous_client.post("/login", json={"token": "nope"}).status_code == 401
    r = anonymous_client.post("/login", json={"token": bob_token, "next": f"/dashboard/runs/{run_id}"})
    assert r.status_code == 200 and r.json() == {"user": "bob", "next": f"/dashboard/runs/{run_id}"}
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and bob_token in cookie
    # Bob's cookie: alice's private run is "not found", page and API alike.
    page = anonymous_client.get(f"/dashboard/runs/{run_id}")
    assert page.status_code == 404 and "There is no run" in page.text and "bob" in page.text
    assert anonymous_client.get(f"/v1/runs/{run_id}").status_code == 404
    assert anonymous_client.post(f"/v1/runs/{run_id}/cancel").status_code == 404
    assert anonymous_client.get("/dashboard").status_code == 200
    # Signed out, the cookie is gone.
    out = anonymous_client.post("/logout", follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert anonymous_client.get("/dashboard", follow_redirects=False).status_code == 303


def test_the_bootstrap_admin_works_on_an_empty_database(client, db_engine) -> None:
    with db_engine.begin() as conn:
        conn.execute(text("TRUNCATE users CASCADE"))
    me = client.get("/v1/me").json()
    assert (me["name"], me["is_admin"]) == ("admin", True)
