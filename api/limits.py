"""The request body limit: a shared lab server reads at most `max_body_bytes` of a request.

A pure ASGI middleware, so the limit holds before FastAPI parses anything: a declared
Content-Length over the limit is refused at once, and a body sent without one (chunked) is
read here, at most up to the limit, and refused as soon as it passes it. 413 with a JSON body
that says the limit.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


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
        body: dict[str, Any] = {
            "detail": f"the request body is larger than this server accepts ({self.max_bytes} bytes; "
            "TCPLAB_MAX_BODY_BYTES)"
        }
        payload = json.dumps(body).encode()
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
