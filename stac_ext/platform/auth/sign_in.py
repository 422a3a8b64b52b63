"""Browser sign-in at the development issuer: OIDC authorization code flow with PKCE.

`GET {issuer}/authorize` shows a development-only form (user name, groups, rights) to anyone
who opens it; its POST redirects to the client's redirect URI with a code (in the query, as
the service's browser sessions ask, or in the fragment with `response_mode=fragment`), and
`POST {issuer}/token` trades code + PKCE verifier for an access token (audiences: the data and
process clients, so one token serves both APIs), an ID token and a refresh token, which it
trades for new ones until REFRESH_SECONDS after the sign-in. This is the flow a web client
runs against Keycloak, so the browser sessions need nothing special here.

Codes are signed by the issuer's key and live a minute: no server-side state, so any API
process can redeem one; a redeemed code is remembered by the process that redeemed it.
Redirect URIs must lie under this service's own address.
"""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from joserfc.errors import JoseError

from stac_ext.platform.auth.local_issuer import LocalIssuer, subject

CODE_SECONDS = 60
TOKEN_SECONDS = 3600
#: how long a sign-in's refresh tokens serve, counted from the sign-in
REFRESH_SECONDS = 12 * 3600
#: the development form's page runs no script and posts only to itself
FORM_CSP = ("default-src 'none'; style-src 'self'; form-action 'self'; "
            "frame-ancestors 'none'; base-uri 'none'")

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")


def _words(value: str) -> list[str]:
    return [w for w in value.replace(",", " ").split() if w]


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _token_error(error: str, description: str) -> JSONResponse:
    """RFC 6749 section 5.2's error body."""
    return JSONResponse({"error": error, "error_description": description}, status_code=400,
                        headers={"Cache-Control": "no-store"})


@dataclass
class SignInRoutes:
    """The authorization, token and logout endpoints (mounted under the issuer's `/auth`),
    one method registering each on `router`."""

    issuer: LocalIssuer
    web_client_id: str
    audiences: list[str]
    router: APIRouter = field(default_factory=APIRouter)
    #: code id -> expiry, so a code is used once per process
    redeemed: dict[str, int] = field(default_factory=dict)
    #: this service's address: where redirects may go
    service: str = field(init=False)

    def __post_init__(self) -> None:
        self.service = self.issuer.issuer.removesuffix("/auth") + "/"
        self.register_authorize_form()
        self.register_authorize()
        self.register_token()
        self.register_logout()

    @staticmethod
    def refused(request: Request, why: str) -> HTMLResponse:
        # never redirect to an address we have not checked: tell the person instead
        return templates.TemplateResponse(request, "sign_in_error.html", {"why": why},
                                          status_code=400, headers={"Content-Security-Policy":
                                                                    FORM_CSP})

    def check(self, client_id: str, redirect_uri: str) -> str | None:
        if client_id != self.web_client_id:
            return (f"Unknown client '{client_id}': this issuer signs in "
                    f"'{self.web_client_id}'.")
        if not redirect_uri.startswith(self.service):
            return f"The redirect address must lie under {self.service}."
        return None

    def register_authorize_form(self) -> None:
        @self.router.get("/authorize", response_class=HTMLResponse,
                         summary="Development sign-in form (authorization endpoint)")
        async def authorize_form(
            request: Request,
            client_id: str = "", redirect_uri: str = "", response_type: str = "",
            state: str = "", nonce: str = "", scope: str = "",
            code_challenge: str = "", code_challenge_method: str = "",
            login_hint: Annotated[str, Query(max_length=100)] = "",
            response_mode: Annotated[str, Query(pattern="^(query|fragment)$")] = "query",
        ) -> HTMLResponse:
            if why := self.check(client_id, redirect_uri):
                return self.refused(request, why)
            if response_type != "code" or code_challenge_method != "S256" \
                    or not code_challenge:
                return self.refused(request, "This issuer runs the authorization code flow "
                                    "with PKCE (response_type=code, "
                                    "code_challenge_method=S256).")
            fields = {"client_id": client_id, "redirect_uri": redirect_uri, "state": state,
                      "nonce": nonce, "scope": scope, "code_challenge": code_challenge,
                      "response_mode": response_mode}
            return templates.TemplateResponse(
                request, "sign_in.html", {"fields": fields, "issuer": self.issuer.issuer,
                                          "login_hint": login_hint},
                headers={"Content-Security-Policy": FORM_CSP, "Cache-Control": "no-store"})

    def register_authorize(self) -> None:
        @self.router.post("/authorize", include_in_schema=False)
        async def authorize(
            request: Request,
            client_id: Annotated[str, Form()], redirect_uri: Annotated[str, Form()],
            code_challenge: Annotated[str, Form()],
            username: Annotated[str, Form(min_length=1, max_length=100)],
            groups: Annotated[str, Form(max_length=2000)] = "",
            rights: Annotated[str, Form(max_length=2000)] = "",
            state: Annotated[str, Form()] = "", nonce: Annotated[str, Form()] = "",
            response_mode: Annotated[str, Form(pattern="^(query|fragment)$")] = "query",
        ) -> Response:
            if why := self.check(client_id, redirect_uri):
                return self.refused(request, why)
            code = self.issuer.sign({
                "typ": "code", "jti": uuid.uuid4().hex, "exp": int(time.time()) + CODE_SECONDS,
                "client_id": client_id, "redirect_uri": redirect_uri,
                "code_challenge": code_challenge, "nonce": nonce,
                "username": username.strip(), "groups": _words(groups),
                "rights": _words(rights),
            })
            answer = urlencode({"code": code, **({"state": state} if state else {})})
            if response_mode == "fragment":  # never sent to a server, so never in a log
                return RedirectResponse(f"{redirect_uri}#{answer}", status_code=303)
            separator = "&" if "?" in redirect_uri else "?"
            return RedirectResponse(f"{redirect_uri}{separator}{answer}", status_code=303)

    def register_token(self) -> None:
        @self.router.post("/token", summary="Token endpoint (authorization_code grant with "
                          "PKCE, refresh_token grant)")
        async def token(
            grant_type: Annotated[str, Form()], client_id: Annotated[str, Form()],
            code: Annotated[str, Form(max_length=8192)] = "",
            redirect_uri: Annotated[str, Form(max_length=2000)] = "",
            code_verifier: Annotated[str, Form(max_length=200)] = "",
            refresh_token: Annotated[str, Form(max_length=8192)] = "",
        ) -> JSONResponse:
            if grant_type == "refresh_token":
                return self.refreshed(refresh_token, client_id)
            if grant_type != "authorization_code":
                return _token_error("unsupported_grant_type",
                                    "Only authorization_code and refresh_token.")
            return self.redeemed_code(code, client_id, redirect_uri, code_verifier)

    def redeemed_code(self, code: str, client_id: str, redirect_uri: str,
                      code_verifier: str) -> JSONResponse:
        """The tokens for a code issued here to this client and address, once (PKCE)."""
        try:
            claims = self.issuer.verify(code)
        except (JoseError, ValueError):
            return _token_error("invalid_grant", "This code was not issued here.")
        now = int(time.time())
        for jti, expiry in list(self.redeemed.items()):
            if expiry < now:
                del self.redeemed[jti]
        if claims.get("typ") != "code" or claims.get("exp", 0) < now \
                or claims.get("jti") in self.redeemed:
            return _token_error("invalid_grant", "The code expired or was used already.")
        if claims.get("client_id") != client_id or claims.get("redirect_uri") != redirect_uri:
            return _token_error("invalid_grant", "The code was issued to another client or "
                                                 "redirect address.")
        if _challenge(code_verifier) != claims.get("code_challenge"):
            return _token_error("invalid_grant", "The code verifier does not match (PKCE).")
        self.redeemed[claims["jti"]] = claims["exp"]
        return self.tokens(claims, client_id)

    def refreshed(self, refresh_token: str, client_id: str) -> JSONResponse:
        try:
            claims = self.issuer.verify(refresh_token)
        except (JoseError, ValueError):
            return _token_error("invalid_grant", "This refresh token was not issued here.")
        if claims.get("typ") != "refresh" or claims.get("exp", 0) < time.time() \
                or claims.get("client_id") != client_id:
            return _token_error("invalid_grant", "The refresh token expired or was issued "
                                                 "to another client.")
        return self.tokens(claims, client_id)

    def tokens(self, claims: dict, client_id: str) -> JSONResponse:
        """An access token, an ID token and a refresh token (signed, no server-side state:
        it lives REFRESH_SECONDS from the sign-in) for the user a code or refresh token
        names."""
        issuer, now = self.issuer, int(time.time())
        username, groups, rights = claims["username"], claims["groups"], claims["rights"]
        access = issuer.mint(username, client_id, groups, rights, TOKEN_SECONDS,
                             audience=self.audiences)
        identity = issuer.sign({
            "iss": issuer.issuer, "sub": subject(username), "aud": client_id,
            "iat": now, "exp": now + TOKEN_SECONDS, "auth_time": now,
            "preferred_username": username, "name": username,
            "groups": [f"/{g.lstrip('/')}" for g in groups],
            **({"nonce": claims["nonce"]} if claims.get("nonce") else {}),
        })
        until = int(claims.get("refresh_until") or now + REFRESH_SECONDS)
        refresh = issuer.sign({
            "typ": "refresh", "jti": uuid.uuid4().hex, "exp": until, "refresh_until": until,
            "client_id": client_id, "username": username, "groups": groups,
            "rights": rights})
        return JSONResponse({"access_token": access, "id_token": identity,
                             "refresh_token": refresh, "token_type": "Bearer",
                             "expires_in": TOKEN_SECONDS,
                             "refresh_expires_in": max(0, until - now),
                             "scope": "openid profile"},
                            headers={"Cache-Control": "no-store"})

    def register_logout(self) -> None:
        @self.router.get("/logout", summary="End session: back to where the client asks, on "
                         "this service")
        async def logout(request: Request, post_logout_redirect_uri: str = "",
                         state: str = "") -> Response:
            # the development issuer keeps no session: signing out is the client forgetting
            # its tokens; this only sends the browser back
            if post_logout_redirect_uri.startswith(self.service):
                separator = "&" if "?" in post_logout_redirect_uri else "?"
                query = f"{separator}{urlencode({'state': state})}" if state else ""
                return RedirectResponse(post_logout_redirect_uri + query, status_code=303)
            return RedirectResponse(self.service, status_code=303)


def sign_in_router(issuer: LocalIssuer, web_client_id: str, audiences: list[str]) -> APIRouter:
    """The sign-in endpoints' router (`SignInRoutes`)."""
    return SignInRoutes(issuer, web_client_id, audiences).router
