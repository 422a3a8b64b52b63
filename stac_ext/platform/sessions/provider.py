"""The identity provider, as the service speaks to it for a browser: its endpoints (OIDC
discovery, read once), the authorization request (code + PKCE), and the code and refresh
tokens traded at its token endpoint, server to server."""

from __future__ import annotations

import base64
import hashlib
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus, urlencode, urlsplit

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

#: The scopes asked for: who the user is (the access token says what they may do)
SCOPES = "openid profile"
#: The identity provider's answers are bounded: a token response is small
MAX_ANSWER_BYTES = 256 * 1024


class ProviderRefused(Exception):
    """The identity provider answered, refusing (e.g. `invalid_grant`): its words."""


@dataclass(frozen=True)
class Tokens:
    access: str
    access_expires: float  # epoch seconds
    refresh: str | None
    refresh_expires: float | None  # None: the provider named no end


def challenge(verifier: str) -> str:
    """PKCE's S256 challenge of a verifier."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class Provider:
    """`transport`: how to reach the provider (the local development issuer is this app
    itself: asked in-process); default: over the network."""

    def __init__(self, issuer: str, client_id: str, client_secret: str | None = None,
                 transport: httpx.AsyncBaseTransport | None = None,
                 timeout: float = 10) -> None:
        self.issuer = issuer.rstrip("/")
        self.client_id = client_id
        self._secret = client_secret
        self._transport = transport
        self._timeout = timeout
        self._endpoints: dict[str, Any] | None = None

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=self._transport, timeout=self._timeout)

    async def endpoints(self) -> dict[str, Any]:
        """The provider's discovery document (read once)."""
        if self._endpoints is None:
            async with self._client() as client:
                r = await client.get(f"{self.issuer}/.well-known/openid-configuration")
            r.raise_for_status()
            found = r.json()
            if not isinstance(found, dict) or "authorization_endpoint" not in found \
                    or "token_endpoint" not in found:
                raise ProviderRefused("the identity provider's discovery document names no "
                                      "authorization or token endpoint")
            self._endpoints = found
        return self._endpoints

    async def authorization_url(self, redirect_uri: str, state: str, verifier: str) -> str:
        endpoint = str((await self.endpoints())["authorization_endpoint"])
        query = urlencode({"client_id": self.client_id, "redirect_uri": redirect_uri,
                           "response_type": "code", "scope": SCOPES, "state": state,
                           "code_challenge": challenge(verifier),
                           "code_challenge_method": "S256"})
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"

    async def end_session_url(self, post_logout_redirect_uri: str) -> str | None:
        """Where the browser ends its sign-in at the provider too (None: it has no such
        endpoint). No ID token in the address: `client_id` names the client."""
        endpoint = (await self.endpoints()).get("end_session_endpoint")
        if not isinstance(endpoint, str) or not endpoint:
            return None
        query = urlencode({"client_id": self.client_id,
                           "post_logout_redirect_uri": post_logout_redirect_uri})
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"

    async def trade_code(self, code: str, verifier: str, redirect_uri: str) -> Tokens:
        return await self._token({"grant_type": "authorization_code", "code": code,
                                  "redirect_uri": redirect_uri, "code_verifier": verifier})

    async def refresh(self, refresh_token: str) -> Tokens:
        return await self._token({"grant_type": "refresh_token",
                                  "refresh_token": refresh_token})

    async def _token(self, form: dict[str, str]) -> Tokens:
        endpoint = str((await self.endpoints())["token_endpoint"])
        form = {**form, "client_id": self.client_id}
        headers = {"Accept": "application/json"}
        if self._secret is not None:  # a confidential client: client_secret_basic
            pair = f"{quote_plus(self.client_id)}:{quote_plus(self._secret)}"  # RFC 6749 2.3.1
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        asked = time.time()
        async with self._client() as client:
            r = await client.post(endpoint, data=form, headers=headers)
        if len(r.content) > MAX_ANSWER_BYTES:
            raise ProviderRefused("the identity provider's answer is too large")
        try:
            body = r.json()
        except ValueError:
            body = None
        if r.status_code != 200 or not isinstance(body, dict) \
                or not isinstance(body.get("access_token"), str):
            words = body.get("error_description") or body.get("error") \
                if isinstance(body, dict) else None
            raise ProviderRefused(str(words or f"its token endpoint answered {r.status_code}"))
        lifetime = _seconds(body.get("expires_in"), 300)
        refresh = body.get("refresh_token")
        refresh_life = _seconds(body.get("refresh_expires_in"), 0)
        return Tokens(access=body["access_token"], access_expires=asked + lifetime,
                      refresh=refresh if isinstance(refresh, str) and refresh else None,
                      refresh_expires=asked + refresh_life if refresh_life else None)


def _seconds(value: Any, default: float) -> float:
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return default


def in_process(app: ASGIApp, base_url: str | None = None) -> httpx.AsyncBaseTransport:
    """A provider that is this very app (the local development issuer), asked in-process at
    its public addresses: BASE_URL's path, which a proxy in front takes off, taken off."""
    root = urlsplit(base_url or "").path.rstrip("/")

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if root and scope["type"] == "http" and path.startswith(root + "/"):
            scope = {**scope, "path": path[len(root):], "raw_path": path[len(root):].encode()}
        await app(scope, receive, send)

    return httpx.ASGITransport(app=served)
