"""Which methods a path takes, as HTTP says: `OPTIONS` answers them in `Allow` (204), and a
405 names all of them. Starlette's own 405 names only the first route matching the path,
while a resource's methods are often several routes (stock's GET items and our POST).
`HEAD` is answered wherever `GET` is, as GET's answer without its body (FastAPI's routes
take only the methods they name: HEAD was a 405 on every one)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fastapi.routing import iter_route_contexts
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import Message, Receive, Scope, Send

from stac_ext.platform.service.http_middleware import HttpMiddleware


def allowed_methods(routes: Iterable[BaseRoute], scope: Scope) -> set[str]:
    """Every method of every route (mounted apps' too) whose path matches the request's."""
    methods: set[str] = set()
    for route in iter_route_contexts(list(routes)):  # FastAPI's view of included routers
        match, child = route.matches(scope)
        if match == Match.NONE:
            continue
        if isinstance(route.original_route, Mount):
            methods |= allowed_methods(route.original_route.routes, {**scope, **child})
        else:
            methods |= set(route.methods or ())
    return methods


def _is_preflight(scope: Scope) -> bool:
    """A CORS preflight is the CORS middleware's to answer."""
    names = {name for name, _ in scope.get("headers", ())}
    return b"origin" in names and b"access-control-request-method" in names


class AllowedMethodsMiddleware(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "OPTIONS" and not _is_preflight(scope):
            methods = self._methods(scope)
            if methods:
                await Response(status_code=204, headers={"Allow": _header(methods)})(
                    scope, receive, send)
                return

        if scope["method"] == "HEAD":
            # the routes see a GET; the server, holding the request's own scope, sends no
            # body for a HEAD
            scope = {**scope, "method": "GET"}

        async def send_with_allow(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 405:
                MutableHeaders(scope=message)["Allow"] = _header(self._methods(scope))
            await send(message)

        await self.app(scope, receive, send_with_allow)

    @staticmethod
    def _methods(scope: Scope) -> set[str]:
        app: Any = scope.get("app")
        routes = getattr(getattr(app, "router", None), "routes", ())
        return allowed_methods(routes, scope)


def _header(methods: set[str]) -> str:
    return ", ".join(sorted(methods | {"OPTIONS"} | ({"HEAD"} if "GET" in methods else set())))
