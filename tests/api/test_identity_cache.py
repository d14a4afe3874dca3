"""The API process's cache of checked tokens (api/auth.py, ``IdentityCache``): a change to who
someone is takes effect at once in the process that made it, within ``auth_cache_s`` in
another; a wrong token is never kept; a look-up that raced a change never stores what it read.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api import auth
from api.auth import IdentityCache
from api.main import create_app
from services.settings import Settings
from services.users.identity import Identity, Quotas
from tests.support import make_user, user_client, wait_for


def _identity(name: str = "ada") -> Identity:
    return Identity(id=uuid.uuid4(), name=name, is_admin=False, quotas=Quotas(10, 10, 10, 10))


def test_a_users_change_reaches_their_cached_identity_at_once(app: Any, client: Any) -> None:
    token = make_user(client, "bob", max_flows=3)
    bob_id = next(u["id"] for u in client.get("/v1/users").json() if u["name"] == "bob")
    with user_client(app, token) as bob:
        assert bob.get("/v1/me").json()["quotas"]["max_flows"] == 3  # now cached
        assert app.state.identities.get(auth.hash_token(token)) is not None
        client.patch(f"/v1/users/{bob_id}", json={"max_flows": 5})
        assert bob.get("/v1/me").json()["quotas"]["max_flows"] == 5
        client.patch(f"/v1/users/{bob_id}", json={"is_admin": True})
        assert bob.get("/v1/users").status_code == 200  # an admin now
        client.patch(f"/v1/users/{bob_id}", json={"disabled": True})
        r = bob.get("/v1/me")
        assert r.status_code == 401 and "disabled" in r.json()["detail"]


def test_a_wrong_token_is_never_kept(app: Any, anonymous_client: Any) -> None:
    for _ in range(3):
        r = anonymous_client.get("/v1/me", headers={"Authorization": "Bearer tcplab_not-a-token"})
        assert r.status_code == 401
    assert app.state.identities.get(auth.hash_token("tcplab_not-a-token")) is None


def test_another_api_process_sees_a_revocation_within_auth_cache_s(
    app: Any, client: Any, test_settings: Settings
) -> None:
    token = make_user(client, "cy")
    other = create_app(test_settings.model_copy(update={"auth_cache_s": 1.0}))  # another process's app
    with TestClient(other, headers={"Authorization": f"Bearer {token}"}) as elsewhere:
        assert elsewhere.get("/v1/me").status_code == 200
        assert other.state.identities.get(auth.hash_token(token)) is not None
        token_id = client.get("/v1/tokens", params={"user_id": elsewhere.get("/v1/me").json()["id"]}).json()[0]["id"]
        assert client.delete(f"/v1/tokens/{token_id}").status_code == 200
        # The revoking process forgot it; this one finds out once its entry expires.
        wait_for(lambda: elsewhere.get("/v1/me").status_code == 401, timeout_s=15)


def test_a_look_up_that_raced_a_change_is_not_stored() -> None:
    cache = IdentityCache(ttl_s=60)
    before_the_change = cache.generation
    cache.clear()  # a revocation committed while the look-up was under way
    cache.put("key", _identity(), before_the_change)
    assert cache.get("key") is None
    cache.put("key", _identity(), cache.generation)
    assert cache.get("key") is not None


def test_entries_expire_and_the_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(auth.time, "monotonic", lambda: now[0])
    cache = IdentityCache(ttl_s=2, max_entries=3)
    for key in "abc":
        cache.put(key, _identity(key), cache.generation)
    now[0] += 1
    cache.put("d", _identity("d"), cache.generation)  # full, none expired: starts over
    assert [k for k in "abcd" if cache.get(k)] == ["d"]
    now[0] += 2.5
    assert cache.get("d") is None  # past its 2 s
    off = IdentityCache(ttl_s=0)
    off.put("a", _identity(), off.generation)
    assert off.get("a") is None
