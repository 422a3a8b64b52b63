"""Every HTML answer of the service protected as a page: no framing by another site
(`frame-ancestors 'none'`, `X-Frame-Options: DENY`), no content sniffing, and a
Content-Security-Policy: the response's own where it sets one (our pages, STAC Browser,
the API documentation, the sign-in form), else a strict one (no script at all)."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: For HTML that sets no policy of its own (an error page, a redirect's body).
STRICT = ("default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; "
          "base-uri 'none'; form-action 'self'")


class HtmlProtectionMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def protected(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if headers.get("content-type", "").startswith("text/html"):
                    headers.setdefault("Content-Security-Policy", STRICT)
                    headers["X-Frame-Options"] = "DENY"
                    headers["X-Content-Type-Options"] = "nosniff"
            await send(message)

        await self.app(scope, receive, protected)
