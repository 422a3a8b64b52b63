"""What a service process does for the subscriptions in the background: the outbox matched
(one process at a time, a batch a transaction), webhooks sent (each subscription leased to
one process at a time, many at once), standing jobs' windows closed, their runs submitted
and followed, and the schema kept bounded. Any number of processes share the work through
the database; one stopped (even by `kill -9`) leaves its leases to expire and its work to
the others, or to itself once started again: nothing is lost, some events may be sent
twice (each keeps its id).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from process_api import ENDED
from stac_ext.subscriptions import queries
from stac_ext.subscriptions.settings import SubscriptionSettings
from stac_ext.subscriptions.standing_jobs import JobRefused, Processes
from stac_ext.subscriptions.webhooks import Webhooks

logger = logging.getLogger("geocatalog.subscriptions")

#: How long a process keeps a webhook's subscription to itself while it sends a batch.
LEASE_SECONDS = 60.0
#: How often the events kept and the delivery logs are trimmed.
PRUNE_SECONDS = 60.0
#: How often a submitted run's job is looked at.
FOLLOW_SECONDS = 2.0
#: A submission not recorded after this long was cut short (its process stopped).
STALE_SUBMISSION_SECONDS = 120.0


async def json_codecs(conn: asyncpg.Connection) -> None:
    """JSON values as Python's (the data API's pools decode them so too)."""
    for name in ("json", "jsonb"):
        await conn.set_type_codec(name, encoder=json.dumps, decoder=json.loads,
                                  schema="pg_catalog")


class Dispatcher:
    def __init__(self, dsn: str, settings: SubscriptionSettings, webhooks: Webhooks,
                 processes: Processes | None = None) -> None:
        self.dsn = dsn
        self.settings = settings
        self.webhooks = webhooks
        #: the process API (set once the app is built; None: no standing job is run here)
        self.processes = processes
        self.pool: asyncpg.Pool | None = None
        self._sending: set[asyncio.Task[None]] = set()
        self._running: asyncio.Task[None] | None = None
        self._pruned = 0.0

    async def run(self) -> None:
        """Until cancelled."""
        self.pool = await asyncpg.create_pool(self.dsn, min_size=0, max_size=4,
                                              max_inactive_connection_lifetime=60,
                                              init=json_codecs)
        try:
            while True:
                try:
                    busy = await self.tick()
                except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
                    logger.warning("subscriptions: %s: %s", type(e).__name__, e)
                    busy = False
                    await asyncio.sleep(self.settings.subscriptions_poll_seconds * 4)
                if not busy:
                    await asyncio.sleep(self.settings.subscriptions_poll_seconds)
        finally:
            for task in [*self._sending, *([self._running] if self._running else [])]:
                task.cancel()
            await asyncio.gather(*self._sending, return_exceptions=True)
            if self._running is not None:
                await asyncio.gather(self._running, return_exceptions=True)
            await self.webhooks.close()
            await self.pool.close()

    async def tick(self) -> bool:
        """One round of each part: whether there is more at once."""
        assert self.pool is not None
        async with self.pool.acquire() as conn:
            if not await conn.fetchval(queries.ANYTHING):
                return False
            matched = await conn.fetchval(queries.MATCH, self.settings.subscriptions_match_batch)
        more = matched is not None and matched >= self.settings.subscriptions_match_batch
        more = await self._claim_webhooks() or more
        if self.processes is not None and (self._running is None or self._running.done()):
            self._running = asyncio.create_task(self._runs(self.processes))
        if time.monotonic() - self._pruned > PRUNE_SECONDS:
            self._pruned = time.monotonic()
            async with self.pool.acquire() as conn:
                await conn.fetchval(queries.PRUNE, self.settings.subscription_events_days,
                                    self.settings.subscription_backlog,
                                    self.settings.subscription_attempts_kept)
        return more

    async def _claim_webhooks(self) -> bool:
        assert self.pool is not None
        free = self.settings.webhooks_in_flight - len(self._sending)
        if free <= 0:
            return False
        async with self.pool.acquire() as conn:
            leased = await conn.fetch(queries.CLAIM_WEBHOOKS, free, LEASE_SECONDS)
        for sub in leased:
            task = asyncio.create_task(self._deliver(sub))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)
        return len(leased) == free

    async def _deliver(self, sub: asyncpg.Record) -> None:
        assert self.pool is not None
        try:
            await self.webhooks.deliver(self.pool, sub)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
            # the lease expires: another round (here or elsewhere) sends them again
            logger.warning("subscription %s: webhook batch not recorded: %s", sub["id"],
                           type(e).__name__)
        except Exception:  # a bug must not stop the dispatcher: the lease expires
            logger.exception("subscription %s: webhook batch", sub["id"])

    # -- standing jobs ---------------------------------------------------------------------

    async def _runs(self, processes: Processes) -> None:
        assert self.pool is not None
        try:
            async with self.pool.acquire() as conn:
                await conn.execute(queries.CLOSE_WINDOWS)
                stale = await conn.fetch(queries.STALE_SUBMISSIONS, STALE_SUBMISSION_SECONDS)
            for run in stale:
                await self.take_up(processes, run)
            while True:
                async with self.pool.acquire() as conn:
                    run = await conn.fetchrow(queries.CLAIM_RUN)
                    items = await conn.fetch(queries.RUN_ITEMS, run["subscription_id"],
                                             run["number"]) if run else []
                if run is None:
                    break
                await self._submit(processes, run, items)
            async with self.pool.acquire() as conn:
                submitted = await conn.fetch(queries.SUBMITTED_RUNS, 50)
            for run in submitted:
                await self.follow(processes, run)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
            logger.warning("subscriptions: standing jobs: %s: %s", type(e).__name__, e)
        except Exception:  # a bug must not stop the dispatcher: logged, retried next round
            logger.exception("subscriptions: standing jobs")

    async def _set(self, run: Any, status: str, message: str | None,
                   later: datetime | None = None) -> None:
        """The run's new status, unless it is no longer as `run` was read (its status and
        its claim)."""
        assert self.pool is not None
        async with self.pool.acquire() as conn:
            await conn.execute(queries.RUN_STATUS, run["subscription_id"], run["number"],
                               status, message, later, run["status"], run["claimed"])

    def _retry_at(self, attempts: int) -> datetime:
        seconds = min(self.settings.webhook_retry_seconds * 2 ** min(attempts, 20) * 10, 3600)
        return datetime.now(UTC) + timedelta(seconds=seconds)

    async def _submit(self, processes: Processes, run: Any, items: list[Any]) -> None:
        assert self.pool is not None
        if not items:
            await self._set(run, "successful", "No item to process.")
            return
        try:
            status, body, headers = await processes.submit(run, items)
        except JobRefused as e:
            await self._set(run, "failed", str(e))
            return
        if status == 201 and body.get("jobID"):
            async with self.pool.acquire() as conn:
                await conn.execute(queries.RUN_SUBMITTED, run["subscription_id"],
                                   run["number"], body["jobID"], headers.get("location"),
                                   run["claimed"])
        elif status in (429, 503):  # quotas, or the service busy: the same attempt later
            wait = float(headers.get("retry-after") or 30)
            async with self.pool.acquire() as conn:
                await conn.execute(
                    queries.RUN_WAITS, run["subscription_id"], run["number"],
                    datetime.now(UTC) + timedelta(seconds=wait),
                    f"Waiting: {body.get('detail') or body.get('description') or status}",
                    run["claimed"])
        else:
            why = str(body.get("detail") or body.get("description") or f"HTTP {status}")
            await self._ended(run, why)

    async def _ended(self, run: Any, why: str) -> None:
        """A failed attempt: tried again while the subscription's retries allow."""
        retries = int(run["job"].get("retries") or 0)
        if run["attempts"] <= retries:
            await self._set(run, "due", f"Attempt {run['attempts']} failed: {why}",
                            self._retry_at(run["attempts"]))
        else:
            await self._set(run, "failed", why)

    async def follow(self, processes: Processes, run: Any) -> None:
        """A submitted run's job looked at: the run's outcome once it has ended."""
        assert self.pool is not None
        status, job = await processes.job(run)
        if status == 404:
            await self._ended(run, "Its job is gone (dismissed).")
            return
        if status != 200 or job.get("status") not in ENDED:
            async with self.pool.acquire() as conn:
                await conn.execute(queries.RUN_LATER, run["subscription_id"], run["number"],
                                   datetime.now(UTC) + timedelta(seconds=FOLLOW_SECONDS))
            return
        if job["status"] == "successful":
            await self._set(run, "successful", None)
        else:
            await self._ended(run, str(job.get("message") or f"The job was {job['status']}."))

    async def take_up(self, processes: Processes, run: Any) -> None:
        """A submission its process did not see through: the job it made, if one was made
        (the owner's oldest of the process since the claim, not another run's), else the
        run due again; nothing if another process has taken it up first."""
        assert self.pool is not None
        async with self.pool.acquire() as conn:
            recorded = set(await conn.fetchval(queries.RECORDED_JOBS, run["subscription_id"]))
        made = [(job, url) for job, url in await processes.jobs_since(run, run["claimed"])
                if job not in recorded]
        if not made:
            await self._set(run, "due", "Submitted again: the service stopped while it was "
                            "being submitted.")
            return
        async with self.pool.acquire() as conn:
            await conn.execute(queries.RUN_TAKEN_UP, run["subscription_id"], run["number"],
                               *made[0], run["claimed"])
