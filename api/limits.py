"""Request bodies on a shared lab server: how much of one the API reads, and where it is parsed.

- ``BodyLimit``, a pure ASGI middleware, holds every request to the server-wide
  ``max_body_bytes`` before FastAPI parses anything: a declared Content-Length over it is
  refused at once, and a body sent without one (chunked) is read here, at most up to the
  limit, and refused as soon as it passes it.
- ``JsonBodyRoute`` (the ``route_class`` of every router whose operations take a JSON body)
  holds the body to its resource's own, smaller limit (``ModelBodyRoute``: model queries,
  ``ScenarioBodyRoute``: run submissions, ``SweepBodyRoute``: sweeps and schedules), and
  parses and validates it in a worker thread: a body of megabytes never holds the event loop
  (and with it ``/healthz`` and every other request) for the second it takes. A small body
  (``INLINE_PARSE_BYTES``) is parsed on the loop: the hand-over would cost more.

Either refusal is a 413 whose ``detail`` names the limit and the setting that sets it.

- ``bounded_errors`` keeps a 422 small whatever the body was: at most ``MAX_ERRORS`` errors
  (``omitted_errors`` says how many more there were), each echoing at most a short, truncated
  excerpt of its input.
"""

from __future__ import annotations

import email.message
import itertools
import json
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar

import anyio.to_thread
from fastapi import Depends, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.deps import UnitOfWorkRoute
from services.settings import Settings


def too_large(limit: int, setting: str, what: str = "this server") -> dict[str, str]:
    name = f"TCPLAB_{setting.upper()}"
    return {"detail": f"the request body is larger than {what} accepts ({limit} bytes; {name})"}


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            # The server holds the client to its Content-Length: checking it is enough.
            if declared.isdigit() and int(declared) > self.max_bytes:
                await self._refuse(send)
            else:
                await self.app(scope, receive, send)
            return
        # No Content-Length (chunked): read up to the limit here, then hand the body on.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break
        whole: Message = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _refuse(self, send: Send) -> None:
        payload = json.dumps(too_large(self.max_bytes, "max_body_bytes")).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A receive that gives `messages` first, then whatever the client sends next."""
    pending = list(messages)

    async def replaying() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replaying


# ---- per route: the resource's limit, and the body parsed off the event loop ------------------

_REFUSED = "tcplab_refused_body"

# A body up to this size is parsed and validated on the event loop: a submission or a small
# model query takes tens of µs, less than handing it to a worker thread and back.
INLINE_PARSE_BYTES = 16_384


async def _refuse_invalid_body(request: Request) -> None:
    """Raises the body's validation errors found in the worker thread. A dependency of every
    JsonBodyRoute, after the router's own (the token): an anonymous caller gets 401 before
    being told what is wrong with its body, as FastAPI's own order has it."""
    refused = getattr(request.state, _REFUSED, None)
    if refused is not None:
        raise refused


class JsonBodyRoute(UnitOfWorkRoute):
    """An operation whose JSON body is read up to ``Settings.<limit_setting>`` (413 beyond),
    then parsed and validated in a worker thread (on the loop when small).

    FastAPI reads, parses and validates a body on the event loop. This route does all three
    first (parse and validation through ``anyio.to_thread``) and hands FastAPI the validated
    model as the request's parsed JSON (Starlette's ``Request.json`` cache), which FastAPI's
    own validation then accepts at once: the operation, its parameters and the OpenAPI
    document stay exactly as declared. Invalid bodies keep FastAPI's 422 (through
    ``_refuse_invalid_body``).
    """

    limit_setting: ClassVar[str] = "max_body_bytes"
    what: ClassVar[str] = "this server"
    inline_parse_bytes: ClassVar[int] = INLINE_PARSE_BYTES

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        dependencies = [*(kwargs.pop("dependencies", None) or []), Depends(_refuse_invalid_body)]
        super().__init__(path, endpoint, dependencies=dependencies, **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler  # FastAPI never reads this operation's body
        # One body parameter, not embedded: FastAPI validates the whole body against it.
        field = self.body_field if len(self.dependant.body_params) == 1 and not self._embed_body_fields else None
        setting, what, inline_bytes = self.limit_setting, self.what, self.inline_parse_bytes

        async def read_parse_validate(request: Request) -> Response:
            limit = _limit(request, setting)
            declared = request.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise HTTPException(413, too_large(limit, setting, what)["detail"])
            body = await request.body()  # BodyLimit has held it to max_body_bytes
            if len(body) > limit:
                raise HTTPException(413, too_large(limit, setting, what)["detail"])
            if body and _is_json(request):
                if len(body) <= inline_bytes:  # tens of µs: cheaper than a worker thread's hand-over
                    parsed, refused = _parse_and_validate(body, field)
                else:
                    parsed, refused = await anyio.to_thread.run_sync(_parse_and_validate, body, field)
                request._json = parsed  # Starlette's cache of request.json(), which FastAPI reads
                if refused is not None:
                    setattr(request.state, _REFUSED, refused)
            return await handler(request)

        return read_parse_validate


class ModelBodyRoute(JsonBodyRoute):
    limit_setting = "max_model_body_bytes"
    what = "a model query"


class ScenarioBodyRoute(JsonBodyRoute):
    limit_setting = "max_scenario_body_bytes"
    what = "a run submission"


class SweepBodyRoute(JsonBodyRoute):
    limit_setting = "max_sweep_body_bytes"
    what = "a sweep or schedule"
    # A few bytes of axis ranges validate into up to MAX_AXES × MAX_AXIS_VALUES values.
    inline_parse_bytes = 0


def _limit(request: Request, setting: str) -> int:
    """The app's setting (its default for an app built without settings: a bare router)."""
    settings: Settings | None = getattr(request.app.state, "settings", None)
    return getattr(settings, setting) if settings is not None else Settings.model_fields[setting].default


def _is_json(request: Request) -> bool:
    """Whether FastAPI would read this body as JSON (its own test of the Content-Type)."""
    content_type = request.headers.get("content-type")
    if not content_type:
        return False
    if content_type == "application/json":  # what nearly every client sends: no parsing
        return True
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


def _parse_and_validate(body: bytes, field: Any) -> tuple[Any, RequestValidationError | None]:
    """In a worker thread: the parsed body, validated when `field` is the whole body; and the
    validation errors, if any (raised after the caller's token is checked)."""
    try:
        parsed = json.loads(body)
    except json.JSONDecodeError as e:  # FastAPI's own 422 for a body that is not JSON
        raise RequestValidationError(
            [
                {
                    "type": "json_invalid",
                    "loc": ("body", e.pos),
                    "msg": "JSON decode error",
                    "input": {},
                    "ctx": {"error": e.msg},
                }
            ]
        ) from None
    except (ValueError, RecursionError) as e:  # not UTF-8, or nested past the parser's depth
        raise HTTPException(400, f"There was an error parsing the body: {type(e).__name__}") from None
    if field is None:
        return parsed, None
    value, errors = field.validate(parsed, {}, loc=("body",))
    if errors:
        return parsed, RequestValidationError(errors)
    return value, None


# ---- what a 422 echoes -----------------------------------------------------------------------

MAX_ERRORS = 50
MAX_ECHO_CHARS = 200
MAX_MESSAGE_CHARS = 2000  # a reason the server wrote, which may quote what it was given
MAX_ECHO_ITEMS = 10
MAX_ECHO_DEPTH = 3


def bounded_errors(errors: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The first MAX_ERRORS errors with their `input` and `ctx` cut short (``echo``), and how
    many errors were left out."""
    kept = [{k: (echo(v) if k in ("input", "ctx") else v) for k, v in e.items()} for e in errors[:MAX_ERRORS]]
    return kept, max(0, len(errors) - MAX_ERRORS)


def echo(value: Any, depth: int = 0, chars: int = MAX_ECHO_CHARS) -> Any:
    """`value` cut to a short excerpt: strings to `chars` characters, lists and objects to
    their first MAX_ECHO_ITEMS items, nesting to MAX_ECHO_DEPTH levels; what was cut says how
    long it was. Never walks more of `value` than it keeps."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str | bytes | bytearray):
        text = value if isinstance(value, str) else bytes(value[: chars * 4]).decode("utf-8", "replace")
        if len(value) <= chars:
            return text
        return f"{text[:chars]}… ({len(value)} {'characters' if isinstance(value, str) else 'bytes'})"
    if isinstance(value, BaseModel):
        value = dict(value)  # its fields, not a dump of everything below them
    if isinstance(value, dict):
        if depth >= MAX_ECHO_DEPTH:
            return f"{{… {len(value)} keys}}"
        items = list(itertools.islice(value.items(), MAX_ECHO_ITEMS))
        kept = {str(k)[:MAX_ECHO_CHARS]: echo(v, depth + 1) for k, v in items}
        if len(value) > MAX_ECHO_ITEMS:
            kept["…"] = f"{len(value) - MAX_ECHO_ITEMS} more keys"
        return kept
    if isinstance(value, list | tuple):
        if depth >= MAX_ECHO_DEPTH:
            return f"[… {len(value)} items]"
        kept_items = [echo(v, depth + 1) for v in value[:MAX_ECHO_ITEMS]]
        if len(value) > MAX_ECHO_ITEMS:
            kept_items.append(f"… {len(value) - MAX_ECHO_ITEMS} more items")
        return kept_items
    return echo(str(value), depth)
