"""`tcplab whoami`, `tcplab users …` (admins) and `tcplab tokens …`: who you are on the lab
server, its users, and the tokens you use it with. A new token is printed once, on stdout
alone, so `tcplab tokens create ci > token.txt` captures just the token."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from rich.markup import escape

from tcplab_client.cli import err, handled, out, print_json, state, table

users_app = typer.Typer(help="The lab's users (admins only).", no_args_is_help=True)
tokens_app = typer.Typer(help="Your API tokens.", no_args_is_help=True)

QUOTAS = ("max_queued_runs", "max_events_per_run", "max_flows", "submissions_per_minute")


def whoami(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Who the token belongs to, the quotas in force and your queued runs."""
    with state(ctx).client() as lab:
        me = lab.me()
    if as_json:
        print_json(me)
        return
    role = " (admin)" if me["is_admin"] else ""
    out().print(f"[bold]{escape(me['name'])}[/]{role} · {me['queued_runs']} runs queued")
    rows = [[name, me["quotas"][name]] for name in QUOTAS]
    out().print(table(["quota", "limit"], rows))


def _print_token(made: dict[str, Any]) -> None:
    err().print(f"token {escape(made['prefix'])}… ({escape(made['name'])}) made; it is shown this once: keep it safe")
    sys.stdout.write(made["token"] + "\n")


def _quota_options(
    max_queued_runs: int | None,
    max_events_per_run: int | None,
    max_flows: int | None,
    submissions_per_minute: int | None,
) -> dict[str, int]:
    given = {
        "max_queued_runs": max_queued_runs,
        "max_events_per_run": max_events_per_run,
        "max_flows": max_flows,
        "submissions_per_minute": submissions_per_minute,
    }
    return {k: v for k, v in given.items() if v is not None}


MaxQueued = Annotated[int | None, typer.Option(help="Runs they may have queued.")]
MaxEvents = Annotated[int | None, typer.Option(help="Simulated events per run.")]
MaxFlows = Annotated[int | None, typer.Option(help="Flows in one scenario.")]
PerMinute = Annotated[int | None, typer.Option(help="Submissions per minute.")]


@users_app.command("create")
@handled
def users_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Letters, digits, _ . @ -")],
    admin: Annotated[bool, typer.Option("--admin", help="Make them an admin.")] = False,
    max_queued_runs: MaxQueued = None,
    max_events_per_run: MaxEvents = None,
    max_flows: MaxFlows = None,
    submissions_per_minute: PerMinute = None,
) -> None:
    """A new user; prints their first token (once) for you to hand over."""
    quotas = _quota_options(max_queued_runs, max_events_per_run, max_flows, submissions_per_minute)
    with state(ctx).client() as lab:
        made = lab.create_user(name, is_admin=admin, **quotas)
    err().print(f"user {escape(made['name'])} ({made['id']}) made")
    _print_token(made["token"])


@users_app.command("list")
@handled
def users_list(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Every user, with their own quotas (– : the server's default)."""
    with state(ctx).client() as lab:
        items = lab.users()
    if as_json:
        print_json(items)
        return
    rows = [[u["name"], u["is_admin"], u["disabled"], *(u["own_quotas"][q] for q in QUOTAS), u["id"]] for u in items]
    out().print(table(["user", "admin", "disabled", *QUOTAS, "id"], rows, title="users"))


@users_app.command("update")
@handled
def users_update(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(help="The user's id (tcplab users list).")],
    admin: Annotated[bool | None, typer.Option("--admin/--no-admin")] = None,
    disabled: Annotated[
        bool | None, typer.Option("--disable/--enable", help="A disabled user's tokens stop working.")
    ] = None,
    max_queued_runs: MaxQueued = None,
    max_events_per_run: MaxEvents = None,
    max_flows: MaxFlows = None,
    submissions_per_minute: PerMinute = None,
) -> None:
    """Change a user's quotas, admin flag, or disable them."""
    changes: dict[str, Any] = _quota_options(max_queued_runs, max_events_per_run, max_flows, submissions_per_minute)
    if admin is not None:
        changes["is_admin"] = admin
    if disabled is not None:
        changes["disabled"] = disabled
    with state(ctx).client() as lab:
        user = lab.update_user(user_id, **changes)
    err().print(f"user {escape(user['name'])} updated")


@tokens_app.command("create")
@handled
def tokens_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="What you call it (laptop, ci, …).")],
    user_id: Annotated[str | None, typer.Option("--user", help="Admins: for this user id.")] = None,
) -> None:
    """A new token; printed once, on stdout."""
    with state(ctx).client() as lab:
        _print_token(lab.create_token(name, user_id=user_id))


@tokens_app.command("list")
@handled
def tokens_list(
    ctx: typer.Context,
    user_id: Annotated[str | None, typer.Option("--user", help="Admins: this user's tokens.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Your tokens (never their secrets)."""
    with state(ctx).client() as lab:
        items = lab.tokens(user_id=user_id)
    if as_json:
        print_json(items)
        return
    rows = [[t["name"], t["prefix"] + "…", t["created_at"], t["last_used_at"], t["revoked_at"], t["id"]] for t in items]
    out().print(table(["name", "token", "created", "last used", "revoked", "id"], rows, title="tokens"))


@tokens_app.command("revoke")
@handled
def tokens_revoke(ctx: typer.Context, token_id: Annotated[str, typer.Argument(help="The token's id.")]) -> None:
    """Revoke a token at once."""
    with state(ctx).client() as lab:
        token = lab.revoke_token(token_id)
    err().print(f"token {escape(token['prefix'])}… ({escape(token['name'])}) revoked")


def register(app: typer.Typer) -> None:
    app.command("whoami")(handled(whoami))
    app.add_typer(users_app, name="users")
    app.add_typer(tokens_app, name="tokens")
