"""Identity: bearer JWTs checked against an OIDC issuer's JWKS, or the local dev issuer.

`Authenticator` turns a token into a `Principal`; `AuthDependencies` makes FastAPI
dependencies of it, which the composition root hands to every package that needs them.
"""

from stac_ext.auth.authenticator import Authenticator, Unauthenticated
from stac_ext.auth.dependencies import AuthDependencies
from stac_ext.auth.principal import Principal

__all__ = ["AuthDependencies", "Authenticator", "Principal", "Unauthenticated"]
