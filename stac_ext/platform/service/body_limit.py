"""Refuse request bodies over a configured size with 413, and JSON bodies nested deeper
than MAX_JSON_DEPTH with 400.

Both are checked as the app reads the body (the size against `Content-Length`, then
against what has streamed in; the nesting once the body is in, on its text, before any
parser sees it), by raising an HTTP error there: each API's own error handlers answer it
in that API's error format. An HTTP/1 request that frames no body (most GETs) passes by.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stac_ext.platform.service.json_body import MAX_JSON_DEPTH, too_deep


class BodyTooLarge(HTTPException):
    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"The request body is larger than {max_bytes} bytes.")


class BodyTooDeep(HTTPException):
    def __init__(self) -> None:
        super().__init__(400, f"The request body nests deeper than {MAX_JSON_DEPTH} levels.")


class BodyLimitMiddleware:
    """413 when `Content-Length` or the streamed body exceeds `max_bytes`; 400 when a JSON
    body nests deeper than MAX_JSON_DEPTH."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or bodiless(scope):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length", b"")
        seen = int(declared) if declared.isdigit() else 0
        json_body = b"json" in headers.get(b"content-type", b"")
        chunks: list[bytes] = []

        async def limited_receive() -> Message:
            nonlocal seen
            if seen > self.max_bytes:  # declared too large: refuse before reading it
                raise BodyTooLarge(self.max_bytes)
            message = await receive()
            if message["type"] == "http.request":
                chunk = message.get("body", b"")
                if not declared:
                    seen += len(chunk)
                    if seen > self.max_bytes:
                        raise BodyTooLarge(self.max_bytes)
                if json_body:
                    chunks.append(chunk)
                    if not message.get("more_body") and too_deep(b"".join(chunks)):
                        raise BodyTooDeep()
            return message

        await self.app(scope, limited_receive, send)


#: The headers by which an HTTP/1 request has a body (without either, it has none).
_FRAMING = (b"content-length", b"transfer-encoding")


def bodiless(scope: Scope) -> bool:
    """An HTTP/1 request without `Content-Length` or `Transfer-Encoding`: it has no body
    (HTTP/2 frames a body without either)."""
    return scope.get("http_version") in ("1.0", "1.1") and not any(
        name in _FRAMING for name, _ in scope["headers"])
