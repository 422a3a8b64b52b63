"""HTML where a browser asks for it: `Accept: text/html` (over any JSON type) or `f=html` on
a GET of `/`, `/data/...` or `/processes/...`.

`/data` resources redirect to the same resource in STAC Browser (a search with criteria is
shown by our results page, as STAC Browser's search page starts empty); `/` and
`/processes/...` are served by our pages at the same address. Everything else, and every JSON
client, passes through unchanged (`f=json` is then taken off by `FormatParameterMiddleware`).
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stac_ext.platform.service.format_param import without_f

JSON_TYPES = ("application/json", "application/geo+json", "application/schema+json")
#: process API paths and the page that answers for them (ids are passed on)
PROCESS_PAGES = {(): "/ui/processes", ("processes",): "/ui/processes",
                 ("jobs",): "/ui/jobs", ("conformance",): "/ui/conformance/processes"}


def _quality(accept: str, wanted: tuple[str, ...]) -> float:
    best = 0.0
    for item in accept.split(","):
        kind, *params = (p.strip() for p in item.split(";"))
        if kind in wanted:
            q = 1.0
            for param in params:
                name, _, value = param.partition("=")
                if name.strip() == "q":
                    try:
                        q = float(value)
                    except ValueError:
                        q = 0.0
            best = max(best, q)
    return best


def wants_html(accept: str, formats: list[str]) -> bool:
    if formats:
        return formats[-1] == "html"
    return _quality(accept, ("text/html",)) > _quality(accept, JSON_TYPES)


def segments(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.split("/") if p)


def docs_page(path: str, processes: tuple[str, ...]) -> str | None:
    """The page that answers the process API's `api.html`, whatever the client (its mount
    would take the path otherwise)."""
    return "/ui/api-docs/processes" if "api.html" in path and segments(path) == (
        *processes, "api.html") else None


def page_for(path: str, data: tuple[str, ...],
             processes: tuple[str, ...]) -> tuple[str, str] | None:
    """("redirect" | "page" | "search" | "browser", target path) for a resource that has an
    HTML form ("search": our results page when the request has criteria, else STAC
    Browser's search; "browser": STAC Browser's page of the resource, `browser_path` makes
    its address) (`data`, `processes`: the APIs' mounts as segments, ("data",),
    ("processes",))."""
    parts = segments(path)
    if not parts:
        return "page", "/ui/home"
    if parts[:len(data)] == data:
        rest = parts[len(data):]
        if rest[:1] in (("_mgmt",), ("api.html",)) or rest[-1:] == ("example.py",):
            return None  # not STAC documents: a generated example is code to read as is
        if rest == ("api",):
            return "redirect", "/" + "/".join((*data, "api.html"))
        if rest == ("conformance",):
            return "page", "/ui/conformance/data"
        if rest == ("search",):  # criteria: our results page; none: STAC Browser's search
            return "search", "/ui/search"
        return "browser", "/".join(rest)
    if parts[:len(processes)] == processes:
        rest = parts[len(processes):]
        if rest == ("api",):
            return "redirect", "/" + "/".join((*processes, "api.html"))
        if rest in PROCESS_PAGES:
            return "page", PROCESS_PAGES[rest]
        if len(rest) == 2 and rest[0] == "processes":
            return "page", f"/ui/processes/{quote(rest[1], safe='')}"
        if len(rest) in (2, 3) and rest[0] == "jobs" and rest[2:] in ((), ("results",)):
            return "page", f"/ui/jobs/{quote(rest[1], safe='')}"
    return None


def browser_path(resource: str) -> str:
    """STAC Browser's address of a resource's page (its path under the data API)."""
    return "/browser/" + "/".join(quote(p, safe="") for p in resource.split("/"))


class HtmlNegotiationMiddleware:
    def __init__(self, app: ASGIApp, data_prefix: str, processes_prefix: str) -> None:
        self.app = app
        # split once, not per request
        self.data, self.processes = segments(data_prefix), segments(processes_prefix)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if docs := docs_page(scope["path"], self.processes):
            scope = {**scope, "path": docs, "raw_path": docs.encode()}
        if scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        query, formats = without_f(scope.get("query_string", b""))
        accept = Headers(scope=scope).get("accept", "")
        html = bool(formats or "text/html" in accept) and wants_html(accept, formats)
        target = page_for(scope["path"], self.data, self.processes)
        if target is None or not html:
            await self.app(scope, receive, send if target is None else _varying(send))
            return
        kind, path = target
        if kind == "search":  # STAC Browser's search page starts empty: criteria are ours
            kind, path = ("page", path) if query else ("redirect", "/browser/search")
        elif kind == "browser":
            kind, path = "redirect", browser_path(path)
        if kind == "redirect":
            root = scope.get("root_path", "")
            location = root + path + (f"?{query.decode('latin-1')}" if query else "")
            await RedirectResponse(location, status_code=303, headers={"Vary": "Accept"})(
                scope, receive, send)
            return
        scope = {**scope, "path": path, "raw_path": path.encode(), "query_string": query}
        await self.app(scope, receive, send)


def _varying(send: Send) -> Send:
    """The JSON answer of an address that answers browsers otherwise: caches must keep
    them apart (`Vary: Accept`)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            MutableHeaders(scope=message).add_vary_header("Accept")
        await send(message)

    return sending
