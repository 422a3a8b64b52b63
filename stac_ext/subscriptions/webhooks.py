"""Webhooks: a subscription's events POSTed to its receiver, in order, one at a time, each
signed; what happened written to its delivery log. A failed attempt stops its batch: the
subscription is tried again after a wait that doubles with each failure in a row, and is
paused once it has failed for WEBHOOK_PAUSE_AFTER_SECONDS without a success.

The receiver is user input: it is checked against the outbound policy before each batch
(no private, loopback or link-local address unless OUTBOUND_ALLOW names it), redirects are
not followed, and logs and the delivery log name only its host (a URL may carry a token).
Each event is checked against what the subscriber may read when it is sent: one whose item
she may no longer read is not sent, and her webhook goes on after it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import httpx
import orjson

from process_api import OutboundPolicy, TargetRefused
from stac_ext.data_api.urls import api_root
from stac_ext.subscriptions import queries
from stac_ext.subscriptions.cloudevents import MEDIA_TYPE, item_event
from stac_ext.subscriptions.settings import SubscriptionSettings
from stac_ext.subscriptions.signing import Signer

logger = logging.getLogger("geocatalog.subscriptions")

#: Events read for one batch of a webhook.
BATCH = 100


@dataclass
class _Attempt:
    number: int | None
    event_id: str | None
    kind: str | None
    item: str | None
    status: int | None
    error: str | None
    milliseconds: int
    attempted: datetime


def _retry_after(failures: int, settings: SubscriptionSettings) -> timedelta:
    seconds = settings.webhook_retry_seconds * 2 ** min(failures - 1, 30)
    return timedelta(seconds=min(seconds, settings.webhook_retry_max_seconds))


class Webhooks:
    """Sends the leased subscriptions' events through one shared HTTP client."""

    def __init__(self, signer: Signer, settings: SubscriptionSettings, data_prefix: str,
                 lease_seconds: float) -> None:
        self.signer = signer
        self.settings = settings
        self.data_prefix = data_prefix
        self.lease_seconds = lease_seconds
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            size = self.settings.webhooks_in_flight
            self._client = httpx.AsyncClient(
                timeout=self.settings.webhook_timeout_seconds, follow_redirects=False,
                limits=httpx.Limits(max_connections=size, max_keepalive_connections=size))
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def deliver(self, pool: asyncpg.Pool, sub: Mapping[str, Any]) -> None:
        """One batch of a leased subscription's events, sent and recorded."""
        url = str(sub["webhook"])
        host = urlsplit(url).hostname or "?"
        delivered = int(sub["delivered_number"])
        attempts: list[_Attempt] = []
        failed: str | None = None
        try:
            await asyncio.to_thread(OutboundPolicy.from_env().check, url)
        except TargetRefused:
            failed = f"{host}: not an address this service may reach (OUTBOUND_ALLOW)"
            attempts.append(_Attempt(None, None, None, None, None, failed, 0,
                                     datetime.now(UTC)))
        if failed is None:
            async with pool.acquire() as conn:
                rows = await conn.fetch(queries.NEXT_EVENTS, sub["id"], delivered,
                                        sub["reader_keys"], sub["owner"], BATCH)
            delivered, failed = await self._send(sub, rows, attempts, delivered, host)
        await self._record(pool, sub, delivered, attempts, failed)

    async def _send(self, sub: Mapping[str, Any], rows: list[asyncpg.Record],
                    attempts: list[_Attempt], delivered: int, host: str
                    ) -> tuple[int, str | None]:
        """The events sent in order until one fails: how far it went, and why it stopped."""
        root = api_root(sub["service_url"], self.data_prefix)
        client = self._http()
        # within the lease, with room for one more attempt: no other process sends these
        deadline = time.monotonic() + self.lease_seconds / 2
        for row in rows:
            if not row["readable"]:  # she may not read it now: never told
                delivered = row["number"]
                continue
            event = item_event(row, root, str(sub["id"]))
            body = orjson.dumps(event)
            headers = {"Content-Type": f"{MEDIA_TYPE}; charset=utf-8",
                       **self.signer.headers(sub["id"], sub["secret_version"], event["id"],
                                             body)}
            started, when = time.monotonic(), datetime.now(UTC)
            status: int | None = None
            error: str | None = None
            try:
                answer = await client.post(str(sub["webhook"]), content=body, headers=headers)
                status = answer.status_code
                if not 200 <= status < 300:
                    error = f"{host} answered {status}" + (
                        " (redirects are not followed)" if 300 <= status < 400 else "")
            except httpx.TimeoutException:
                error = f"{host}: no answer within {self.settings.webhook_timeout_seconds:g} s"
            except httpx.HTTPError as e:
                error = f"{host}: {type(e).__name__}"
            attempts.append(_Attempt(
                row["number"], event["id"], row["kind"],
                f"{row['collection']}/{row['item_id']}", status, error,
                int((time.monotonic() - started) * 1000), when))
            if error is not None:
                return delivered, error
            delivered = row["number"]
            if time.monotonic() > deadline:
                break
        return delivered, None

    async def _record(self, pool: asyncpg.Pool, sub: Mapping[str, Any], delivered: int,
                      attempts: list[_Attempt], failed: str | None) -> None:
        now = datetime.now(UTC)
        failures, since, later, paused = 0, None, None, None
        if failed is not None:
            failures = int(sub["failures"]) + 1
            since = sub["failing_since"] or now
            later = now + _retry_after(failures, self.settings)
            if (now - since).total_seconds() >= self.settings.webhook_pause_after_seconds:
                paused = (f"Paused by the service on {now:%Y-%m-%d %H:%M} UTC: its webhook "
                          f"failed for {(now - since).total_seconds():.0f} s ({failed}). "
                          "Resume it once the receiver answers.")
                logger.warning("subscription %s paused: its webhook failed (%s)", sub["id"],
                               failed)
        async with pool.acquire() as conn, conn.transaction():
            if attempts:
                await conn.execute(
                    queries.ATTEMPTS, sub["id"], [a.number for a in attempts],
                    [a.event_id for a in attempts], [a.kind for a in attempts],
                    [a.item for a in attempts], [a.status for a in attempts],
                    [a.error for a in attempts], [a.milliseconds for a in attempts],
                    [a.attempted for a in attempts])
            await conn.execute(queries.SENT, sub["id"], delivered, failures, since, later,
                               failed, paused)
            if paused is not None:
                await conn.execute(queries.PAUSED, sub["id"], paused)
