"""The subscriptions' settings: who matches and delivers, how webhooks are sent, retried
and paused, and how much each subscription keeps."""

from __future__ import annotations

import base64
import binascii

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class SubscriptionSettings(BaseSettings):
    """Subscriptions"""

    # errors never echo values: WEBHOOK_SIGNING_KEY is a secret
    model_config = SettingsConfigDict(extra="ignore", hide_input_in_errors=True,
                                      use_attribute_docstrings=True)

    subscriptions_delivery: bool = True
    """This service's processes match new item events to the subscriptions, send webhooks
    and submit standing jobs (any number of processes share the work through the
    database); `false`: this one leaves it to others."""
    subscriptions_poll_seconds: float = Field(default=0.5, gt=0, le=60)
    """How often an idle process looks for item events to match, webhooks to send and
    standing jobs to run."""
    subscriptions_match_batch: int = Field(default=2000, ge=1, le=100_000)
    """Item events matched per transaction."""
    subscriptions_per_user: int = Field(default=100, ge=1, le=100_000)
    """Subscriptions one user may have: one more is refused with a 409."""
    webhook_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
    """Seconds a webhook receiver has to answer each event."""
    webhooks_in_flight: int = Field(default=32, ge=1, le=1000)
    """Subscriptions a process sends events to at once (each one in order, one event at a
    time): a slow receiver holds one of them."""
    webhook_retry_seconds: float = Field(default=1.0, gt=0, le=3600)
    """The wait after a webhook's first failed attempt; it doubles with each failure in a
    row, up to WEBHOOK_RETRY_MAX_SECONDS."""
    webhook_retry_max_seconds: float = Field(default=300.0, gt=0, le=86400)
    """The longest wait between two attempts of a failing webhook."""
    webhook_pause_after_seconds: float = Field(default=86400.0, gt=0, le=30 * 86400)
    """A webhook that fails this long, without one success, is paused (its page says why)
    until its owner resumes it; its events wait, up to SUBSCRIPTION_BACKLOG."""
    webhook_signing_key: str | None = None
    """32 random bytes, base64url: each webhook's signing secret is derived from it and the
    subscription (nothing of it is stored), so every process of the service must share
    it; unset: `GEOCATALOG_DATA_DIR/webhook-signing.key` (one machine only). Changing it
    changes every secret."""
    subscription_events_days: float = Field(default=7.0, gt=0, le=3650)
    """Days a subscription's events are kept (its feed, its webhook's backlog): older ones
    go, unsent ones counted as dropped on its page."""
    subscription_backlog: int = Field(default=100_000, ge=100, le=100_000_000)
    """The most events one subscription keeps: beyond it the oldest go, unsent ones counted
    as dropped (a receiver away for long holds no more than this)."""
    subscription_attempts_kept: int = Field(default=200, ge=10, le=100_000)
    """Webhook attempts kept in each subscription's delivery log."""

    @field_validator("webhook_signing_key")
    @classmethod
    def _signing_key(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            text = value.strip()
            size = len(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        except (binascii.Error, ValueError):
            size = -1
        if size != 32:
            raise ValueError("must be 32 random bytes, base64url-encoded")
        return value
