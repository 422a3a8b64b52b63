"""The development token issuer: an RSA key in the data dir, its JWKS and discovery
document served by the service, and `geocatalog token` to mint tokens with it.

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

from stac_ext.service.keyfiles import write_once

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
             rights: list[str] | None = None, ttl: int = 3600) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer, "sub": str(uuid.uuid5(uuid.NAMESPACE_URL, username)),
            "aud": client_id, "azp": client_id, "typ": "Bearer",
            "iat": now, "nbf": now, "exp": now + ttl,
            "preferred_username": username,
            "groups": [f"/{g.lstrip('/')}" for g in groups or []],
            "realm_access": {"roles": list(rights or [])},
        }
        header = {"alg": ALGORITHM, "kid": self._key.kid, "typ": "JWT"}
        return jwt.encode(header, claims, self._key)

    def router(self) -> APIRouter:
        """Discovery document and JWKS, at `{issuer}/.well-known/...` and `{issuer}/jwks`."""
        router = APIRouter(prefix="/auth", tags=["Development token issuer"])

        @router.get("/.well-known/openid-configuration")
        async def discovery() -> dict:
            return {"issuer": self.issuer, "jwks_uri": f"{self.issuer}/jwks",
                    "id_token_signing_alg_values_supported": [ALGORITHM],
                    "response_types_supported": ["token"],
                    "subject_types_supported": ["public"]}

        @router.get("/jwks")
        async def jwks() -> dict:
            return dict(self.public_keys.as_dict())

        return router
