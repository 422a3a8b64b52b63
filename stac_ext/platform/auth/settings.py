"""Identity's settings: the identity provider, the client ids tokens must name, and the
rights that make an administrator or a deployer."""

from __future__ import annotations

from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class AuthSettings(BaseSettings):
    """Identity"""

    model_config = SettingsConfigDict(extra="ignore", use_attribute_docstrings=True)

    oidc_issuer: str | None = None
    """Identity provider (e.g. `https://keycloak.example/realms/geo`); its JWKS is found by
    OIDC discovery, cached, refetched once on an unknown `kid` (at most every 30 s). Unset
    (with `JWKS_URL`): the local development issuer."""
    jwks_url: str | None = None
    """JWKS location when discovery is not wanted (needs `OIDC_ISSUER`: `iss` is always
    checked)."""
    data_client_id: str = "geocatalog"
    """The client id tokens must carry (as `azp`, or among the audiences `aud`) for data
    writes."""
    process_client_id: str = "geocatalog-processes"
    """The client id tokens must carry (as `azp`, or in `aud`) for protected process
    endpoints."""
    admin_right: str = "manageCollections"
    """The right of administrators: collection writes, and any item."""
    deploy_right: str = "deployProcess"
    """The right to deploy processes through the process API (OGC API Processes Part 2)."""

    @property
    def api_audiences(self) -> list[str]:
        """The audiences of a token for both APIs (the web client's)."""
        return [self.data_client_id, self.process_client_id]

    @model_validator(mode="after")
    def _issuer_with_jwks(self) -> AuthSettings:
        if self.jwks_url and not self.oidc_issuer:
            raise ValueError("JWKS_URL needs OIDC_ISSUER too: tokens' `iss` is checked against it")
        return self
