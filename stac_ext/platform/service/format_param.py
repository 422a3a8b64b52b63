"""The `f` query parameter (OGC APIs' output format) on every endpoint: `f=json` is what
every endpoint answers anyway (GDAL and other OGC clients send it), so it is taken off the
request before routing; any other value is a 400 in the API's own error format."""

from __future__ import annotations

from urllib.parse import unquote_plus

from starlette.types import ASGIApp, Receive, Scope, Send

from stac_ext.platform.service.errors import api_error

FORMATS = ("json",)


def without_f(query: bytes) -> tuple[bytes, list[str]]:
    """The query string without its `f` parameters (others byte for byte), and their values."""
    if b"f" not in query and b"%66" not in query:  # no key can be `f`: most queries
        return query, []
    kept, values = [], []
    for part in query.split(b"&"):
        key, _, value = part.partition(b"=")
        if unquote_plus(key.decode("latin-1")) == "f":
            values.append(unquote_plus(value.decode("latin-1")))
        elif part:
            kept.append(part)
    return b"&".join(kept), values


class FormatParameterMiddleware:
    """`ogc_prefix`: the process API's mount, whose errors are OGC's."""

    def __init__(self, app: ASGIApp, ogc_prefix: str) -> None:
        self.app = app
        self.ogc_prefix = ogc_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and b"f=" in scope.get("query_string", b""):
            query, values = without_f(scope["query_string"])
            if unknown := [v for v in values if v not in FORMATS]:
                detail = (f"Unknown output format f={unknown[0]!r}: this endpoint answers "
                          f"{', '.join(f'f={f}' for f in FORMATS)}.")
                await api_error(scope["path"], self.ogc_prefix, 400, detail,
                                "InvalidQueryParameter")(scope, receive, send)
                return
            scope = {**scope, "query_string": query}
        await self.app(scope, receive, send)
