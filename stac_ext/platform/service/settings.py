"""The service's own settings: where it listens, the public URL its links use, the request
body bound, and what `serve` does with an empty catalog; and how every concern's settings
read a list from one variable (`CommaSeparated`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def comma_separated(value: object) -> object:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


#: A list read from one comma-separated variable (not JSON, as pydantic-settings would).
CommaSeparated = Annotated[list[str], NoDecode, BeforeValidator(comma_separated)]


class ServiceSettings(BaseSettings):
    """Service"""

    model_config = SettingsConfigDict(extra="ignore", use_attribute_docstrings=True)

    base_url: str | None = None
    """Public URL of the service (e.g. `https://geo.example.org/catalog`); unset: links
    follow the request's `Host` / `Forwarded` / `X-Forwarded-Proto` / `-Host` headers."""
    geocatalog_host: str = "127.0.0.1"
    """Where `serve` listens (`--host` sets it too); the local development issuer's URL
    follows it when `BASE_URL` is unset."""
    geocatalog_port: int = 8080
    """The port `serve` listens on (`--port` sets it too)."""
    max_body_bytes: int = 32 * 2**20
    """Request bodies above this size are refused with 413 (bulk loads go through
    `geocatalog load`)."""
    load_demo_data: bool | None = None
    """`serve` loads the demo set when the catalog has no collection: `true`, `false`, or
    unset: only into the embedded cluster (a database `DATABASE_URL` names is the
    operator's, and gets no demo data unless asked)."""

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else value
