"""The session at work on every request: a request that carries the session's cookie (and
no `Authorization` of its own) goes on with the session's bearer token, so the APIs, the
pages and STAC Browser read as the signed-in user; the user is left on the request's state
for pages. A cookie of no live session is told to go.

Cross-site request forgery: a request of an unsafe method that the cookie would sign in is
taken only from this service's own pages: the browser's `Sec-Fetch-Site: same-origin`, or,
from a browser that sends no Fetch Metadata, an `Origin` of this service. Else 403, in the
API's error format, and nothing done. (SameSite=Lax keeps the cookie off other sites'
requests in the first place; this also covers sibling sites and older browsers.)
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stac_ext.platform.service.answer_headers import add_vary, raw, value
from stac_ext.platform.service.errors import api_error
from stac_ext.platform.sessions import cookies
from stac_ext.platform.sessions.keeper import SessionKeeper
from stac_ext.platform.sessions.signed_in import STATE_KEY

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
FORGED = ("Refused: this request would act with your browser's sign-in, but it did not "
          "come from this service's own pages (cross-site request forgery). Send it from "
          "the service's pages, or with a bearer token of your own.")


def own_origin(scope: Scope) -> bytes:
    """This service's origin as the request addresses it."""
    host = value(scope["headers"], b"host")
    if host is None and scope.get("server"):
        server_host, port = scope["server"]
        host = f"{server_host}:{port}".encode()
    return scope.get("scheme", "http").encode() + b"://" + (host or b"")


def from_own_pages(scope: Scope) -> bool:
    """Whether the browser says the request comes from this service's own origin."""
    site = value(scope["headers"], b"sec-fetch-site")
    if site is not None:
        return site == b"same-origin"
    origin = value(scope["headers"], b"origin")
    return origin is not None and origin == own_origin(scope)


class SessionMiddleware:
    """`ogc_prefix`: the process API's mount (its refusals are OGC exceptions);
    `static`: path prefixes of files that are the same for everyone (a page's scripts and
    styles), served without looking the session up."""

    def __init__(self, app: ASGIApp, keeper: SessionKeeper, ogc_prefix: str,
                 static: tuple[str, ...] = ()) -> None:
        self.app = app
        self.keeper = keeper
        self.ogc_prefix = ogc_prefix
        self.static = static

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.static):
            await self.app(scope, receive, send)
            return
        headers = scope["headers"]
        found = cookies.read(headers, cookies.SESSION)
        if found is None or value(headers, b"authorization") is not None:
            await self.app(scope, receive, send)
            return
        cookie, secure = found
        session = await self.keeper.current(cookie)
        if session is None:
            await self.app(scope, receive, _forgetting(send, secure))
            return
        if scope["method"] not in SAFE_METHODS and not from_own_pages(scope):
            await api_error(scope["path"], self.ogc_prefix, 403, FORGED, "Forbidden")(
                scope, receive, send)
            return
        scope.setdefault("state", {})[STATE_KEY] = session.signed_in
        bearer = (b"authorization", b"Bearer " + session.access.encode("latin-1"))
        await self.app({**scope, "headers": [*headers, bearer]}, receive, _private(send))


def _forgetting(send: Send, secure: bool) -> Send:
    """`send`, telling the browser to forget a cookie of no live session."""
    forget = cookies.set_cookie(cookies.SESSION, "", 0, secure).encode("latin-1")

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            raw(message).append((b"set-cookie", forget))
        await send(message)

    return sending


def _private(send: Send) -> Send:
    """`send`, keeping an answer read with the session out of shared caches (a request
    with a cookie, unlike one with `Authorization`, is no reason for them not to store it)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = raw(message)
            if value(headers, b"cache-control") is None:
                headers.append((b"cache-control", b"private"))
            add_vary(headers, b"Cookie")
        await send(message)

    return sending
