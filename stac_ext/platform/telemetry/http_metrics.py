"""Requests counted and timed by route template and status class (and a traced
request's span named by its template).

By template (`/data/collections/{collection_id}/items/{item_id}`), never by raw path: a
series per item would grow without bound. A pure ASGI middleware (no per-request task or
body copy); the template is read from the route Starlette's routers matched, which they
leave in the request's scope (the innermost one, under a mount: the process API).
"""

from __future__ import annotations

import time

from opentelemetry import trace
from prometheus_client import Counter, Histogram
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stac_ext.platform.service.http_middleware import HttpMiddleware

REQUESTS = Counter("geocatalog_http_requests", "HTTP requests answered, by route template "
                   "and status class (2xx, 4xx, ...).", ["method", "route", "status"])
LATENCY = Histogram(
    "geocatalog_http_request_duration_seconds", "From a request's arrival to the end of its "
    "answer's body, by route template and status class.", ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, float("inf")))

#: A request no route matched (a 404 of the router, a redirect of a slash), or answered by a
#: middleware before routing (a 413 of the body limit, a redirect of a browser).
UNMATCHED = "<unmatched>"
#: Where the route's template goes from the recorder to the counter: middlewares between
#: them answer with a copy of the scope (a rewritten path or query), never a copy of this.
_SLOT = "geocatalog.route_template"


#: Each series' counter and histogram by (method, template, status // 100): looked up once,
#: not by their labels on every request. Bounded: the HTTP parser knows a fixed set of
#: methods, the app a fixed set of templates.
_SERIES: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}


def _series(method: str, template: str, status_class: int) -> tuple[Counter, Histogram]:
    key = (method, template, status_class)
    found = _SERIES.get(key)
    if found is None:
        labels = (method, template, f"{status_class}xx")
        found = _SERIES[key] = (REQUESTS.labels(*labels), LATENCY.labels(*labels))
    return found


def route_template(scope: Scope, root_path: str) -> str:
    """The matched route's path as declared, with the mounts above it (`root_path`: the
    request's root path before routing)."""
    route = scope.get("route")
    if route is None:
        return UNMATCHED
    # root_path grew by each mount's path on the way in: the mounts' part of the template
    mounts = str(scope.get("root_path", ""))[len(root_path):]
    if isinstance(route, Mount):  # a mount answered itself (static files)
        return f"{mounts}/{{path}}"
    return mounts + str(getattr(route, "path", UNMATCHED))


class RouteRecorder:
    """The innermost middleware: sees the scope the routers fill in, and writes down the
    template of the route that answered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        slot = scope.get(_SLOT)
        if slot is None:
            await self.app(scope, receive, send)
            return
        root_path = str(scope.get("root_path", ""))

        async def send_recorded(message: Message) -> None:
            # the routers have matched before the answer starts: recorded then, for the
            # trace's span to be named before it ends with the answer
            if message["type"] == "http.response.start" and not slot:
                slot.append(route_template(scope, root_path))
            await send(message)

        try:
            await self.app(scope, receive, send_recorded)
        finally:
            if not slot:
                slot.append(route_template(scope, root_path))


class RequestMetricsMiddleware(HttpMiddleware):
    """The outermost middleware: every request counted and timed, with its status class and
    the template `RouteRecorder` wrote down."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status = 500  # what the client sees when the app fails before answering
        slot: list[str] = []
        scope[_SLOT] = slot
        span = trace.get_current_span()  # the request's own, when traced

        async def send_counted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if slot and span.is_recording():
                    # named by the whole template: the instrumentation sees the mounts
                    # only (`POST /processes`)
                    span.update_name(f"{scope['method']} {slot[-1]}")
                    span.set_attribute("http.route", slot[-1])
            await send(message)

        try:
            await self.app(scope, receive, send_counted)
        finally:
            count, latency = _series(scope["method"], slot[-1] if slot else UNMATCHED,
                                     status // 100)
            count.inc()
            latency.observe(time.perf_counter() - started)
