"""Bearer token → Principal: signature against the issuer's keys, `exp`, `nbf`, `iss`."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import Any

from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet

from stac_ext.platform.auth.keys import KeySource
from stac_ext.platform.auth.principal import Principal

logger = logging.getLogger(__name__)

#: Asymmetric algorithms only: never `none`, never HS* (which a public key would sign).
ALLOWED_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                      "ES256", "ES384", "ES512", "EdDSA"]


class Unauthenticated(Exception):
    """The token is missing, malformed, expired, not yet valid or wrongly signed."""


class Authenticator:
    """Validates bearer JWTs issued by `issuer` and signed by a key of `key_source`."""

    #: Tokens whose signature was verified, by the whole token, with the key set that
    #: verified it: their claims are checked again on every use (`exp`, `nbf`, `iss`), the
    #: signature again only when the issuer's keys have changed since.
    VERIFIED_TOKENS = 4096

    def __init__(self, key_source: KeySource, issuer: str, leeway: int = 30) -> None:
        #: token -> its claims, the key set that verified it, its principal
        self._verified: OrderedDict[str, tuple[dict[str, Any], KeySet, Principal]] = \
            OrderedDict()
        self._keys = key_source
        self._leeway = leeway
        self._claims = jwt.JWTClaimsRegistry(
            leeway=leeway,
            iss={"essential": True, "value": issuer},
            exp={"essential": True},
        )

    async def authenticate(self, token: str) -> Principal:
        keys = await self._keys.keys()
        cached = self._verified.get(token)
        if cached is not None and cached[1] is keys:
            # verified and validated before: only time can make it invalid now (the
            # claims' full validation on every read cost a tenth of a single item's)
            claims, _, principal = cached
            if time.time() > float(claims["exp"]) + self._leeway:
                self._verified.pop(token, None)
                raise Unauthenticated("The token is expired")
            self._verified.move_to_end(token)
            return principal
        claims, keys = await self._verify(token, keys)
        try:
            self._claims.validate(claims)
        except JoseError as e:
            raise Unauthenticated(e.description or e.error) from e
        principal = Principal.from_claims(claims)
        if not principal.username:
            raise Unauthenticated("the token names no user (preferred_username)")
        self._verified[token] = (claims, keys, principal)
        if len(self._verified) > self.VERIFIED_TOKENS:
            self._verified.popitem(last=False)
        return principal

    async def _verify(self, token: str, keys: KeySet) -> tuple[dict[str, Any], KeySet]:
        """The claims of a token whose signature a key of the issuer verifies, and that
        key set."""
        try:
            return self._decode(token, keys).claims, keys
        except InvalidKeyIdError:
            # The issuer may have rotated its keys since we cached them: look once more.
            keys = await self._keys.keys(refresh=True)
            try:
                return self._decode(token, keys).claims, keys
            except InvalidKeyIdError as e:
                raise Unauthenticated("the token's signing key is unknown") from e

    @staticmethod
    def _decode(token: str, keys: KeySet) -> jwt.Token:
        try:
            return jwt.decode(token, keys, algorithms=ALLOWED_ALGORITHMS)
        except InvalidKeyIdError:
            raise
        except (JoseError, ValueError, TypeError, KeyError) as e:
            raise Unauthenticated("invalid token") from e
