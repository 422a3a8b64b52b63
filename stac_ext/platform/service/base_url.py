"""A configured public BASE_URL wins over the request's Host and X-Forwarded-* headers."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from stac_ext.platform.service.forwarded import FORWARDING


class BaseUrlMiddleware:
    """Rewrite scheme, host and root path of each request to those of `base_url`."""

    def __init__(self, app: ASGIApp, base_url: str) -> None:
        self.app = app
        url = urlsplit(base_url)
        self.scheme = url.scheme
        self.host = url.netloc.encode()
        self.root_path = url.path.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = dict(scope)
            scope["scheme"] = self.scheme
            scope["root_path"] = self.root_path
            scope["headers"] = [
                (k, v) for k, v in scope["headers"] if k != b"host" and k not in FORWARDING
            ] + [(b"host", self.host)]
        await self.app(scope, receive, send)
