"""The session's endpoints, under `/ui/session`: sign in (to the identity provider, code +
PKCE), the way back from it (the code traded here, the session opened, the browser given
its cookie), sign out (the session closed, then the provider's own sign-out), and who is
signed in (no token: the browser never holds one)."""

from __future__ import annotations

import hmac
import html
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Annotated
from urllib.parse import urlsplit

import httpx
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from stac_ext.platform.sessions import cookies
from stac_ext.platform.sessions.keeper import SessionKeeper, SignInFailed
from stac_ext.platform.sessions.provider import Provider, ProviderRefused
from stac_ext.platform.sessions.sealing import Seal, Unsealed
from stac_ext.platform.sessions.signed_in import signed_in

logger = logging.getLogger("geocatalog.sessions")

PREFIX = "/ui/session"
#: A sign-in left unfinished this long is forgotten
SIGN_IN_SECONDS = 600
#: The failure page runs no script
FAILED_CSP = ("default-src 'none'; style-src 'self'; frame-ancestors 'none'; "
              "base-uri 'none'; form-action 'self'")


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def back_to(request: Request, wanted: str | None) -> str:
    """Where to send the browser once signed in: an address of this service (`wanted`, else
    the page it came from), never elsewhere; else the service's home."""
    base = str(request.base_url)
    for candidate in (wanted, request.headers.get("referer")):
        if not candidate:
            continue
        if candidate.startswith("/") and not candidate.startswith(("//", "/\\")):
            candidate = base.rstrip("/") + candidate
        parts = urlsplit(candidate)
        if candidate.startswith(base) and parts.scheme in ("http", "https") \
                and PREFIX not in parts.path:
            return candidate
    return base


def _failed(request: Request, why: str, status: int = 400) -> HTMLResponse:
    sign_in = html.escape(f"{request.base_url}{PREFIX.lstrip('/')}/sign-in")
    page = ("<!doctype html><html lang=\"en\"><meta charset=\"utf-8\">"
            "<title>Sign-in not finished</title><h1>Sign-in not finished</h1>"
            f"<p>{html.escape(why)}</p><p><a href=\"{sign_in}\">Sign in again</a> · "
            f"<a href=\"{html.escape(str(request.base_url))}\">Home</a></p></html>")
    response = HTMLResponse(page, status_code=status,
                            headers={"Content-Security-Policy": FAILED_CSP,
                                     "Cache-Control": "no-store"})
    response.headers.append("set-cookie", cookies.set_cookie(cookies.SIGN_IN, "", 0,
                                                             _secure(request)))
    return response


@dataclass
class SessionRoutes:
    """Who is signed in, sign in, the way back, sign out: one method registering each on
    `router`."""

    keeper: SessionKeeper
    seal: Seal
    router: APIRouter = field(default_factory=lambda: APIRouter(prefix=PREFIX))

    def __post_init__(self) -> None:
        self.register_who()
        self.register_sign_in()
        self.register_callback()
        self.register_sign_out()

    @property
    def provider(self) -> Provider:
        return self.keeper.provider

    @staticmethod
    def callback_url(request: Request) -> str:
        return f"{request.base_url}{PREFIX.lstrip('/')}/callback"

    def register_who(self) -> None:
        @self.router.get("", summary="Who this browser's session signed in")
        async def who(request: Request) -> JSONResponse:
            user = signed_in(request)
            body = {"signedIn": True, **user.public()} if user else {"signedIn": False}
            return JSONResponse(body, headers={"Cache-Control": "no-store"})

    def register_sign_in(self) -> None:
        @self.router.get("/sign-in", summary="Sign in: to the identity provider, and back")
        async def sign_in(request: Request,
                          back: Annotated[str | None, Query(alias="return", max_length=2000)]
                          = None) -> Response:
            state, verifier = secrets.token_urlsafe(24), secrets.token_urlsafe(48)
            try:
                target = await self.provider.authorization_url(self.callback_url(request),
                                                               state, verifier)
            except (httpx.HTTPError, ProviderRefused, ValueError) as e:
                logger.warning("the identity provider's discovery failed: %s", e)
                return _failed(request, "The identity provider does not answer; try again "
                                        "shortly.", 503)
            in_flight = self.seal.seal({"state": state, "verifier": verifier,
                                        "return": back_to(request, back),
                                        "until": time.time() + SIGN_IN_SECONDS})
            response = RedirectResponse(target, status_code=303,
                                        headers={"Cache-Control": "no-store"})
            response.headers.append("set-cookie", cookies.set_cookie(
                cookies.SIGN_IN, in_flight, SIGN_IN_SECONDS, _secure(request)))
            return response

    def register_callback(self) -> None:
        @self.router.get("/callback", summary="The way back from the identity provider")
        async def callback(
            request: Request,
            code: Annotated[str | None, Query(max_length=4096)] = None,
            state: Annotated[str | None, Query(max_length=200)] = None,
            error: Annotated[str | None, Query(max_length=200)] = None,
            error_description: Annotated[str | None, Query(max_length=1000)] = None,
        ) -> Response:
            found = cookies.read(request.scope["headers"], cookies.SIGN_IN)
            try:
                flight = self.seal.open(found[0]) if found else None
            except Unsealed:
                flight = None
            if flight is None or float(flight.get("until", 0)) < time.time():
                return _failed(request, "This sign-in was started in another browser, or "
                                        "more than ten minutes ago.")
            if not state or not hmac.compare_digest(state, str(flight.get("state", ""))):
                return _failed(request, "This answer belongs to another sign-in.")
            if error or not code:
                return _failed(request, "The identity provider did not sign you in: "
                                        f"{error_description or error or 'no code'}.")
            try:
                tokens = await self.provider.trade_code(code, str(flight["verifier"]),
                                                        self.callback_url(request))
                cookie, who = await self.keeper.open(tokens)
            except (ProviderRefused, SignInFailed) as e:
                return _failed(request, f"The sign-in could not be finished: {e}.")
            except httpx.HTTPError as e:
                logger.warning("the identity provider's token endpoint failed: %s", e)
                return _failed(request, "The identity provider does not answer; try again "
                                        "shortly.", 503)
            logger.info("signed in: %s", who.username)
            max_age = int(who.expires.timestamp() - time.time())
            response = RedirectResponse(back_to(request, str(flight.get("return") or "")),
                                        status_code=303, headers={"Cache-Control": "no-store"})
            secure = _secure(request)
            response.headers.append("set-cookie", cookies.set_cookie(
                cookies.SESSION, cookie, max_age, secure))
            response.headers.append("set-cookie", cookies.set_cookie(cookies.SIGN_IN, "", 0,
                                                                     secure))
            return response

    def register_sign_out(self) -> None:
        @self.router.post("/sign-out",
                          summary="Sign out: the session closed, then at the provider")
        async def sign_out(request: Request) -> Response:
            # the middleware took this POST only from our own pages (or it has no session)
            found = cookies.read(request.scope["headers"], cookies.SESSION)
            if found is not None:
                await self.keeper.close(found[0])
            home = str(request.base_url)
            try:
                target = await self.provider.end_session_url(home) or home
            except (httpx.HTTPError, ProviderRefused, ValueError):
                target = home
            response = RedirectResponse(target, status_code=303,
                                        headers={"Cache-Control": "no-store"})
            response.headers.append("set-cookie", cookies.set_cookie(
                cookies.SESSION, "", 0, found[1] if found else _secure(request)))
            return response


def session_router(keeper: SessionKeeper, seal: Seal) -> APIRouter:
    """The session's endpoints' router (`SessionRoutes`)."""
    return SessionRoutes(keeper, seal).router
