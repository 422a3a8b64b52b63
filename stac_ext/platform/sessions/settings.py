"""Browser sessions' settings: how long one lasts, the key that seals its tokens, and the
web client's secret where the identity provider gives it one."""

from __future__ import annotations

import base64
import binascii

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: How to make a SESSION_KEY, for the error that asks for one.
MAKE_KEY = ("python3 -c 'import base64, secrets; "
            "print(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())'")


class SessionSettings(BaseSettings):
    """Browser sessions"""

    # errors never echo values: the key and the client secret are secrets
    model_config = SettingsConfigDict(extra="ignore", hide_input_in_errors=True,
                                      use_attribute_docstrings=True)

    session_hours: float = Field(default=12, gt=0, le=24 * 30)
    """How long a browser stays signed in at most (its tokens are refreshed within it while
    the identity provider allows); then it signs in again."""
    session_key: SecretStr | None = None
    """32 random bytes, base64url: seals the sessions' tokens in the database, the same on
    every API host; unset: `GEOCATALOG_DATA_DIR/session.key` (one machine only)."""
    web_client_secret: SecretStr | None = None
    """The web client's secret, where the identity provider makes it a confidential client
    (the service trades its codes and refresh tokens itself); unset: a public client with
    PKCE."""

    @field_validator("session_key")
    @classmethod
    def _key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(key_bytes(value)) != 32:
            raise ValueError(f"must be 32 random bytes, base64url-encoded; make one with: "
                             f"{MAKE_KEY}")
        return value


def key_bytes(value: SecretStr) -> bytes:
    """A base64url key's bytes (none: not base64url)."""
    text = value.get_secret_value().strip()
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return b""
