"""A request's public address from the proxy in front: stock stac-fastapi's
`ProxyHeaderMiddleware` (`Forwarded`, `X-Forwarded-Proto`, `-Host`, `-Port`), which every
link the API writes follows. It is passed by where it would change nothing: a request that
names no proxy and one plain `Host` (stock decodes and rebuilds every header of every
request to write back the same host).
"""

from __future__ import annotations

import re

from stac_fastapi.api.middleware import ProxyHeaderMiddleware
from starlette.types import Receive, Scope, Send

#: The headers stock reads a proxy's address from.
FORWARDING = frozenset({b"forwarded", b"x-forwarded-proto", b"x-forwarded-host",
                        b"x-forwarded-port"})
#: A host stock would write back as it came: a name, and a port written as stock writes one.
_PLAIN_HOST = re.compile(rb"[\w.-]+(?::([1-9][0-9]{0,4}))?")
#: The port stock leaves out of the host it writes, by scheme.
_DEFAULT_PORT = {"http": b"80", "https": b"443"}


def unchanged_by_stock(scope: Scope) -> bool:
    """Whether stock's middleware would leave the request's scheme and host as they are."""
    default = _DEFAULT_PORT.get(scope.get("scheme", "http"))
    host = None
    for name, value in scope["headers"]:
        if name in FORWARDING:
            return False
        if name == b"host":
            if host is not None:  # two: stock takes neither
                return False
            host = value
    plain = _PLAIN_HOST.fullmatch(host) if host is not None and default else None
    return plain is not None and plain.group(1) != default


class ForwardedHeaders(ProxyHeaderMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and unchanged_by_stock(scope):
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)
