"""Identity: bearer JWTs checked against an OIDC issuer's JWKS, or the local dev issuer.

`Authenticator` turns a token into a `Principal`; `AuthDependencies` makes FastAPI
dependencies of it, which the composition root hands to every package that needs them.

Third-party imports: `fastapi`, `httpx`, `joserfc`, `pydantic`, `pydantic_settings`.
"""
