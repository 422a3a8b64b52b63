"""Which representation a request gets, and how an HTML one goes out: one middleware.

- `f` (OGC APIs' output format) on every endpoint: `f=json`, what every endpoint answers
  anyway (GDAL and other OGC clients send it), is taken off the request before routing;
  `f=html` asks for HTML as a browser's `Accept` does; any other value is a 400 in the
  API's own error format.
- HTML where a browser asks for it (`Accept: text/html` over any JSON type, or `f=html`) on
  a GET of `/`, `/data/...` or `/processes/...`: `/data` resources redirect to the same
  resource in STAC Browser (a search with criteria is shown by our results page, as STAC
  Browser's search page starts empty); `/` and `/processes/...` are served by our pages at
  the same address. The JSON answer of such an address varies by `Accept`.
- Every HTML answer of the service, whoever made it, is protected as a page
  (`html_headers.protect`).

Everything else, and every JSON client, passes through unchanged.
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.datastructures import MutableHeaders
from starlette.responses import RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stac_ext.platform.service.answer_headers import add_vary, raw, value
from stac_ext.platform.service.errors import api_error
from stac_ext.platform.service.format_param import refusal, without_f
from stac_ext.platform.service.html_headers import protect
from stac_ext.platform.service.http_middleware import HttpMiddleware

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
    return tuple(filter(None, path.split("/")))


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
        if rest[:1] in (("_mgmt",), ("api.html",)) or rest[-1:] in (
                ("example.py",), ("thumbnail.png",)) or rest[-2:-1] == ("explore",):
            # not STAC documents: a generated example is code to read as is, a quicklook a
            # picture, the explorer's views what its page reads
            return None
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
        if len(rest) == 3 and rest[0] == "jobs" and rest[2] == "prov":
            return "page", f"/ui/jobs/{quote(rest[1], safe='')}/prov"
    return None


def browser_path(resource: str) -> str:
    """STAC Browser's address of a resource's page (its path under the data API)."""
    return "/browser/" + "/".join(quote(p, safe="") for p in resource.split("/"))


class NegotiationMiddleware(HttpMiddleware):
    """`data_prefix`, `processes_prefix`: the APIs' mounts (the process API's errors are
    OGC's)."""

    def __init__(self, app: ASGIApp, data_prefix: str, processes_prefix: str) -> None:
        super().__init__(app)
        self.ogc_prefix = processes_prefix
        # split once, not per request
        self.data, self.processes = segments(data_prefix), segments(processes_prefix)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if docs := docs_page(scope["path"], self.processes):
            scope = {**scope, "path": docs, "raw_path": docs.encode()}
        query, formats = without_f(scope.get("query_string", b""))
        target = page_for(scope["path"], self.data, self.processes) \
            if scope["method"] in ("GET", "HEAD") else None
        if target is not None and _asks_html(scope, formats):
            await self._html(target, query, scope, receive, _sending(send, vary=False))
            return
        if refused := refusal(formats):
            await api_error(scope["path"], self.ogc_prefix, 400, refused,
                            "InvalidQueryParameter")(scope, receive, send)
            return
        if formats:
            scope = {**scope, "query_string": query}
        await self.app(scope, receive, _sending(send, vary=target is not None))

    async def _html(self, target: tuple[str, str], query: bytes, scope: Scope,
                    receive: Receive, send: Send) -> None:
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
        # the page comes back here after a sign-in (`templating.page_address`)
        scope.setdefault("state", {})["asked_path"] = scope["path"]
        scope = {**scope, "path": path, "raw_path": path.encode(), "query_string": query}
        await self.app(scope, receive, send)


def _asks_html(scope: Scope, formats: list[str]) -> bool:
    """Whether the request asks for HTML: by `f`, else by its `Accept`."""
    if formats:
        return wants_html("", formats)
    accept = value(scope["headers"], b"accept") or b""
    return b"text/html" in accept and wants_html(accept.decode("latin-1"), [])


def _sending(send: Send, vary: bool) -> Send:
    """`send`, with an HTML answer protected as a page and, where the address answers
    browsers otherwise (`vary`), `Vary: Accept`: caches keep the two apart."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = raw(message)
            if vary:
                add_vary(headers, b"Accept")
            if (value(headers, b"content-type") or b"").startswith(b"text/html"):
                protect(MutableHeaders(scope=message))
        await send(message)

    return sending
