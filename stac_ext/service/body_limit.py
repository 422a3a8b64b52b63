"""Refuse request bodies over a configured size with 413.

The limit is checked as the app reads the body (against `Content-Length`, then against
what has streamed in), by raising an HTTP error there: each API's own error handlers
answer it in that API's error format.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(HTTPException):
    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"The request body is larger than {max_bytes} bytes.")


class BodyLimitMiddleware:
    """413 when `Content-Length` or the streamed body exceeds `max_bytes`."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        seen = int(declared) if declared.isdigit() else 0

        async def limited_receive() -> Message:
            nonlocal seen
            if seen > self.max_bytes:  # declared too large: refuse before reading it
                raise BodyTooLarge(self.max_bytes)
            message = await receive()
            if message["type"] == "http.request" and not declared:
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, limited_receive, send)
