"""Bearer token → Principal: signature against the issuer's keys, `exp`, `nbf`, `iss`."""

from __future__ import annotations

import logging

from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet

from stac_ext.auth.keys import KeySource
from stac_ext.auth.principal import Principal

logger = logging.getLogger(__name__)

#: Asymmetric algorithms only: never `none`, never HS* (which a public key would sign).
ALLOWED_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                      "ES256", "ES384", "ES512", "EdDSA"]


class Unauthenticated(Exception):
    """The token is missing, malformed, expired, not yet valid or wrongly signed."""


class Authenticator:
    """Validates bearer JWTs issued by `issuer` and signed by a key of `key_source`."""

    def __init__(self, key_source: KeySource, issuer: str, leeway: int = 30) -> None:
        self._keys = key_source
        self._claims = jwt.JWTClaimsRegistry(
            leeway=leeway,
            iss={"essential": True, "value": issuer},
            exp={"essential": True},
        )

    async def authenticate(self, token: str) -> Principal:
        try:
            decoded = self._decode(token, await self._keys.keys())
        except InvalidKeyIdError:
            # The issuer may have rotated its keys since we cached them: look once more.
            try:
                decoded = self._decode(token, await self._keys.keys(refresh=True))
            except InvalidKeyIdError as e:
                raise Unauthenticated("the token's signing key is unknown") from e
        try:
            self._claims.validate(decoded.claims)
        except JoseError as e:
            raise Unauthenticated(e.description or e.error) from e
        principal = Principal.from_claims(decoded.claims)
        if not principal.username:
            raise Unauthenticated("the token names no user (preferred_username)")
        return principal

    @staticmethod
    def _decode(token: str, keys: KeySet) -> jwt.Token:
        try:
            return jwt.decode(token, keys, algorithms=ALLOWED_ALGORITHMS)
        except InvalidKeyIdError:
            raise
        except (JoseError, ValueError, TypeError, KeyError) as e:
            raise Unauthenticated("invalid token") from e
