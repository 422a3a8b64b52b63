"""The development token issuer: an RSA key in the data dir, its JWKS and discovery
document served by the service, `geocatalog token` to mint tokens with it, and a browser
sign-in (authorization code + PKCE, `auth/sign_in.py`) with a development form.

Only active when neither OIDC_ISSUER nor JWKS_URL is set. Never for production.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from fastapi import APIRouter
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from stac_ext.platform.service.keyfiles import write_once

ALGORITHM = "RS256"


class LocalIssuer:
    """Signs tokens shaped like Keycloak's, with a key kept in `key_file` (mode 0600)."""

    def __init__(self, key_file: Path, issuer: str) -> None:
        self.issuer = issuer
        self.key_file = key_file
        self._key = self._load_or_create()

    def _load_or_create(self) -> RSAKey:
        if not self.key_file.exists():  # of two processes starting together, one key wins
            key = RSAKey.generate_key(2048, parameters={"kid": uuid.uuid4().hex[:16],
                                                         "use": "sig", "alg": ALGORITHM},
                                      private=True)
            write_once(self.key_file, json.dumps(key.as_dict(private=True)))
        return RSAKey.import_key(json.loads(self.key_file.read_text()))

    @property
    def public_keys(self) -> KeySet:
        return KeySet.import_key_set({"keys": [self._key.as_dict(private=False)]})

    def mint(self, username: str, client_id: str, groups: list[str] | None = None,
             rights: list[str] | None = None, ttl: int = 3600,
             audience: list[str] | None = None) -> str:
        """A token issued to `client_id` (`azp`), intended for `audience` (default: itself)."""
        now = int(time.time())
        claims = {
            "iss": self.issuer, "sub": subject(username),
            "aud": audience or client_id, "azp": client_id, "typ": "Bearer",
            "iat": now, "nbf": now, "exp": now + ttl,
            "preferred_username": username,
            "groups": [f"/{g.lstrip('/')}" for g in groups or []],
            "realm_access": {"roles": list(rights or [])},
        }
        return self.sign(claims)

    def sign(self, claims: dict) -> str:
        header = {"alg": ALGORITHM, "kid": self._key.kid, "typ": "JWT"}
        return jwt.encode(header, claims, self._key)

    def verify(self, token: str) -> dict:
        """The claims of a token this issuer signed (signature only; callers check the rest)."""
        return dict(jwt.decode(token, self.public_keys, algorithms=[ALGORITHM]).claims)

    def router(self, sign_in: APIRouter | None = None) -> APIRouter:
        """Discovery document and JWKS, at `{issuer}/.well-known/...` and `{issuer}/jwks`,
        and the browser sign-in's endpoints when given."""
        router = APIRouter(prefix="/auth", tags=["Development token issuer"])

        @router.get("/.well-known/openid-configuration")
        async def discovery() -> dict:
            document = {"issuer": self.issuer, "jwks_uri": f"{self.issuer}/jwks",
                        "id_token_signing_alg_values_supported": [ALGORITHM],
                        "response_types_supported": ["token"],
                        "subject_types_supported": ["public"]}
            if sign_in is not None:
                document |= {
                    "authorization_endpoint": f"{self.issuer}/authorize",
                    "token_endpoint": f"{self.issuer}/token",
                    "end_session_endpoint": f"{self.issuer}/logout",
                    "response_types_supported": ["code"],
                    "response_modes_supported": ["query", "fragment"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "scopes_supported": ["openid", "profile"],
                }
            return document

        @router.get("/jwks")
        async def jwks() -> dict:
            return dict(self.public_keys.as_dict())

        if sign_in is not None:
            router.include_router(sign_in)
        return router


def subject(username: str) -> str:
    """A stable `sub` for a user name."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, username))
