"""Sign-in links (issue 15, `tcplab open`) through the real app, PostgreSQL and Redis: a link
signs a browser in once, as its maker only, within its minute, and lands on a page of this
server only."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from api.auth import TOKEN_COOKIE
from services.users.rate import pooled_client
from services.users.sign_in import _key, create_sign_in_link
from tests.conftest import ADMIN_TOKEN
from tests.support import make_user, user_client, wait_for


def _mint(client: Any, path: str = "/dashboard") -> dict[str, Any]:
    r = client.post("/v1/sign-in-links", json={"path": path})
    assert r.status_code == 201, r.text
    return r.json()


def _open(anonymous_client: Any, link: dict[str, Any]) -> Any:
    anonymous_client.cookies.clear()
    return anonymous_client.get(link["link_path"], follow_redirects=False)


def test_a_link_signs_in_once_as_its_maker_and_moves_on_to_its_page(client: Any, anonymous_client: Any) -> None:
    link = _mint(client, "/dashboard/regions?rtt_s=0.1&rto_s=0.35")
    assert link["user"] == "admin" and link["expires_in_s"] == 60
    assert urlsplit(link["url"]).path == link["link_path"] and link["link_path"].startswith("/sign-in/")

    r = _open(anonymous_client, link)
    assert r.status_code == 200, r.text
    assert '<meta http-equiv="refresh" content="0;url=/dashboard/regions?rtt_s=0.1&amp;rto_s=0.35">' in r.text
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{TOKEN_COOKIE}={ADMIN_TOKEN};") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert r.headers["cache-control"] == "no-store" and r.headers["referrer-policy"] == "no-referrer"
    assert anonymous_client.get("/v1/me").json()["name"] == "admin"  # the cookie it set works
    assert anonymous_client.get("/dashboard/regions", follow_redirects=False).status_code == 200

    again = _open(anonymous_client, link)
    assert again.status_code == 410 and "set-cookie" not in again.headers
    assert anonymous_client.get("/v1/me").status_code == 401
    assert _open(anonymous_client, {"link_path": "/sign-in/not-a-code"}).status_code == 410


def test_a_link_lives_a_minute_in_redis_and_an_expired_one_signs_nobody_in(
    app: Any, client: Any, anonymous_client: Any
) -> None:
    redis = pooled_client(app.state.redis_url)
    code = _mint(client)["link_path"].removeprefix("/sign-in/")
    assert 0 < redis.ttl(_key(code)) <= 60
    assert ADMIN_TOKEN.encode() not in redis.get(_key(code))  # sealed: useless without the link

    short = create_sign_in_link(app.state.redis_url, ADMIN_TOKEN, "/dashboard", ttl_s=1)
    wait_for(lambda: not redis.exists(_key(short.code)), timeout_s=30)
    r = _open(anonymous_client, {"link_path": f"/sign-in/{short.code}"})
    assert r.status_code == 410 and "set-cookie" not in r.headers and "expired" in r.text


@pytest.mark.parametrize(
    "path", ["//evil.example/", "https://evil.example/", "/\\evil.example", "/\t/evil.example", "evil.example", ""]
)
def test_a_link_to_another_site_is_refused_naming_the_path(client: Any, path: str) -> None:
    r = client.post("/v1/sign-in-links", json={"path": path})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"][0]
    assert detail["path"] == "$.path" and "path of this server" in detail["msg"]


def test_a_user_gets_links_for_themselves_only_and_a_revoked_token_opens_nothing(
    app: Any, client: Any, anonymous_client: Any
) -> None:
    token = make_user(client, "bob")
    with user_client(app, token) as bob:
        for body in ({"path": "/dashboard", "user": "admin"}, {"path": "/dashboard", "token": ADMIN_TOKEN}):
            r = bob.post("/v1/sign-in-links", json=body)
            assert r.status_code == 422 and r.json()["detail"][0]["type"] == "extra_forbidden", r.text
        link = _mint(bob)
        assert link["user"] == "bob"
        assert _open(anonymous_client, link).status_code == 200
        assert anonymous_client.get("/v1/me").json()["name"] == "bob"

        revoked = _mint(bob)
        token_id = next(t["id"] for t in bob.get("/v1/tokens").json() if not t.get("revoked_at"))
        assert client.delete(f"/v1/tokens/{token_id}").status_code == 200
        app.state.identities.clear()
        assert _open(anonymous_client, revoked).status_code == 410
    anonymous_client.cookies.clear()
    assert anonymous_client.post("/v1/sign-in-links", json={"path": "/dashboard"}).status_code == 401
