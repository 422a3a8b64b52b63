"""The public address a request is answered for (every link's base) is stock's, whatever
the proxy headers: `ForwardedHeaders` passes a request by only where stock's middleware
would leave its scheme and host as they are."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from stac_fastapi.api.middleware import ProxyHeaderMiddleware
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from stac_ext.platform.service.forwarded import ForwardedHeaders, unchanged_by_stock

pytestmark = pytest.mark.unit

REQUESTS: list[tuple[str, list[tuple[bytes, bytes]]]] = [
    ("http", [(b"host", b"geo.example.org")]),
    ("http", [(b"host", b"127.0.0.1:8080"), (b"accept", b"*/*")]),
    ("http", [(b"host", b"geo.example.org:80")]),  # the default port: stock leaves it out
    ("https", [(b"host", b"geo.example.org:443")]),
    ("https", [(b"host", b"geo.example.org:80")]),
    ("http", [(b"host", b"geo.example.org:080")]),  # stock writes the port as a number
    ("http", [(b"host", b"geo.example.org:port")]),
    ("http", [(b"host", b"[::1]:8080")]),
    ("http", [(b"host", b"a.example"), (b"host", b"b.example")]),  # two: stock takes neither
    ("http", []),  # no host: the server's address
    ("http", [(b"host", b"127.0.0.1:8080"), (b"x-forwarded-proto", b"https"),
              (b"x-forwarded-host", b"geo.example.org")]),
    ("http", [(b"host", b"127.0.0.1:8080"), (b"x-forwarded-port", b"8443")]),
    ("http", [(b"host", b"127.0.0.1:8080"),
              (b"forwarded", b"for=10.0.0.1;proto=https;host=geo.example.org:8443")]),
]


def _seen(middleware: type[ProxyHeaderMiddleware], scheme: str,
          headers: list[tuple[bytes, bytes]]) -> tuple[str, str]:
    """The request's scheme and base URL as the app behind `middleware` sees them."""
    seen: dict[str, Any] = {}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen["scheme"], seen["base_url"] = scope["scheme"], str(Request(scope).base_url)

    async def receive() -> Message:
        return {"type": "http.request"}

    async def send(message: Message) -> None:
        pass

    scope = {"type": "http", "scheme": scheme, "method": "GET", "path": "/data/",
             "root_path": "", "query_string": b"", "headers": list(headers),
             "server": ("10.1.2.3", 8000)}
    asyncio.run(middleware(app)(scope, receive, send))
    return seen["scheme"], seen["base_url"]


@pytest.mark.parametrize(("scheme", "headers"), REQUESTS)
def test_every_request_is_answered_for_stocks_address(
        scheme: str, headers: list[tuple[bytes, bytes]]) -> None:
    assert _seen(ForwardedHeaders, scheme, headers) == _seen(ProxyHeaderMiddleware, scheme,
                                                              headers)


def test_only_a_plain_unforwarded_host_is_passed_by() -> None:
    passed = [(scheme, headers) for scheme, headers in REQUESTS
              if unchanged_by_stock({"scheme": scheme, "headers": headers})]
    assert passed == [("http", [(b"host", b"geo.example.org")]),
                      ("http", [(b"host", b"127.0.0.1:8080"), (b"accept", b"*/*")]),
                      ("https", [(b"host", b"geo.example.org:80")])]
