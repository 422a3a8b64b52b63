"""A real OIDC-style issuer for tests: an RSA key made here, discovery + JWKS over HTTP."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import uvicorn
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

#: The data API's and the process API's client ids (the settings' defaults), and the admin
#: right.
DATA_CLIENT = "geocatalog"
PROCESS_CLIENT = "geocatalog-processes"
ADMIN_RIGHT = "manageCollections"


class TestIssuer:
    """Signs Keycloak-shaped tokens; serves its keys on 127.0.0.1:`port`."""

    __test__ = False

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/realms/test"
        self.key = RSAKey.generate_key(2048, parameters={"kid": "test-1"}, private=True)
        self.jwks_requests = 0
        self._port = port
        self._server: uvicorn.Server | None = None

    def rotate(self) -> None:
        """A new signing key under a new kid (the old one is no longer published)."""
        self.key = RSAKey.generate_key(2048, parameters={"kid": uuid.uuid4().hex}, private=True)

    def _app(self) -> Starlette:
        async def discovery(request: Any) -> JSONResponse:
            return JSONResponse({"issuer": self.url,
                                 "jwks_uri": f"{self.url}/protocol/openid-connect/certs"})

        async def jwks(request: Any) -> JSONResponse:
            self.jwks_requests += 1
            return JSONResponse(KeySet([self.key]).as_dict(private=False))

        return Starlette(routes=[
            Route("/realms/test/.well-known/openid-configuration", discovery),
            Route("/realms/test/protocol/openid-connect/certs", jwks),
        ])

    def start(self) -> None:
        config = uvicorn.Config(self._app(), host="127.0.0.1", port=self._port,
                                log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        threading.Thread(target=self._server.run, daemon=True).start()
        while not self._server.started:
            time.sleep(0.02)

    def stop(self) -> None:
        if self._server:
            self._server.should_exit = True

    def claims(self, user: str, client: str = DATA_CLIENT, groups: list[str] | None = None,
               rights: list[str] | None = None, ttl: int = 600) -> dict[str, Any]:
        now = int(time.time())
        return {"iss": self.url, "sub": user, "azp": client, "aud": "account",
                "iat": now, "nbf": now, "exp": now + ttl, "preferred_username": user,
                "groups": [f"/{g}" for g in groups or []],
                "realm_access": {"roles": rights or []}}

    def sign(self, claims: dict[str, Any], key: RSAKey | None = None,
             header: dict[str, Any] | None = None) -> str:
        key = key or self.key
        return jwt.encode(header or {"alg": "RS256", "kid": key.kid}, claims, key)

    def token(self, user: str, **kwargs: Any) -> str:
        return self.sign(self.claims(user, **kwargs))
