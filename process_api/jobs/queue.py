"""procrastinate's side of the job engine: its connections (a pool in autocommit, to the
primary only), its schema, what says the database is away, a worker's job manager that
waits an outage out, and the one line an aborted job's log says."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import procrastinate
import psycopg
import psycopg_pool
from procrastinate.jobs import JobInserted
from procrastinate.manager import NotificationCallback
from psycopg_pool import AsyncConnectionPool

logger = logging.getLogger("geocatalog.jobs")
T = TypeVar("T")

ENGINE_SCHEMA = "procrastinate"
#: The task every queued job is (its argument: the job's id).
TASK = "geocatalog.run_job"
#: What the job store's and the queue's connections raise while the database is away (a
#: read-only server too: a primary demoted or fenced while a failover is under way).
UNREACHABLE = (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout,
               psycopg.errors.ReadOnlySqlTransaction,
               procrastinate.exceptions.ConnectorException, OSError)


#: What of those says the database is away when procrastinate wraps it (its
#: ConnectorException wraps every psycopg error, a query's own too).
AWAY = (psycopg.OperationalError, psycopg.InterfaceError,
        psycopg.errors.ReadOnlySqlTransaction, OSError)


def away(error: BaseException) -> bool:
    """Whether `error` (one of UNREACHABLE) says the database is away, not that it refused
    the query: a query refused again and again is no outage to wait out (a worker another
    one pruned, its heartbeat late, may fetch no job: it registers again)."""
    if isinstance(error, procrastinate.exceptions.ConnectorException):
        return isinstance(error.__cause__, AWAY)
    return isinstance(error, UNREACHABLE)


class ReadOnlyServer(psycopg.OperationalError):
    """A pooled connection's server refuses writes now: the pool drops it."""


def queue_pool(dsn: str, timeout: float, max_size: int = 4) -> AsyncConnectionPool:
    """procrastinate's connections, as its own pool makes them (checked when taken, so a
    restarted database is noticed) but in autocommit: each of its queries is one statement,
    so a defer is not wrapped in BEGIN / COMMIT round trips."""
    return AsyncConnectionPool(
        dsn, min_size=1, max_size=max_size, open=False, timeout=timeout,
        # psycopg's pools try to connect again after 1, 2, 4, 8... s while the database is
        # away, for 5 minutes: after a 10 s failover one would wait up to 16 s more before
        # it tried the new primary. Given up after `timeout`, the next request that wants a
        # connection tries at once.
        reconnect_timeout=timeout,
        kwargs={"options": f"-c search_path={ENGINE_SCHEMA}",
                "connect_timeout": connect_timeout(timeout)},
        configure=autocommit, check=checked_writable)


async def checked_writable(conn: psycopg.AsyncConnection) -> None:
    """The queue's check of a connection taken from its pool: it answers (a restarted
    database is noticed), and its server still takes writes (`writable`)."""
    await AsyncConnectionPool.check_connection(conn)
    await writable(conn)


async def writable(conn: psycopg.AsyncConnection) -> None:
    """A pool's check of a connection it hands out: its server refuses no writes, as the
    server last reported (PostgreSQL sends both settings to every session whenever they
    change; no round trip). A connection to a replica or a demoted primary is dropped and
    the pool connects anew: to the primary, where the URL lists a cluster's members."""
    info = conn.info
    if "on" in (info.parameter_status("in_hot_standby"),
                info.parameter_status("default_transaction_read_only")):
        await conn.close()  # a failed check's connection goes back to the pool unless closed
        raise ReadOnlyServer(f"{info.host}:{info.port} accepts no writes")


async def autocommit(conn: psycopg.AsyncConnection) -> None:
    # not a connection keyword: procrastinate's listener adds `autocommit` to the pool's
    await conn.set_autocommit(True)


def connect_timeout(timeout: float) -> int:
    """libpq's connect_timeout: whole seconds, at least 2 (it treats 1 as 2)."""
    return max(2, math.ceil(timeout))


class QuietAborts(logging.Filter):
    """An aborted job (a worker shutting down) is an expected event: procrastinate logs it
    with the CancelledError's traceback; one line says it all."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError
                                          | procrastinate.exceptions.JobAborted):
            record.exc_info = record.exc_text = None
        return True


QUIET_ABORTS = QuietAborts()


def install_engine_schema(conn: Any) -> tuple[str, bool]:
    """Create procrastinate's tables in their own schema, once (a psycopg connection):
    (what the schema is, whether this call created it)."""
    what = f"{ENGINE_SCHEMA}: procrastinate {procrastinate.__version__} schema"
    exists = conn.execute("SELECT to_regclass(%s)", (f"{ENGINE_SCHEMA}.procrastinate_jobs",))
    if exists.fetchone()[0] is not None:
        return what, False
    with conn.transaction():
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {ENGINE_SCHEMA}")
        conn.execute(f"SET LOCAL search_path TO {ENGINE_SCHEMA}")
        conn.execute(procrastinate.schema.SchemaManager.get_schema())
    return what, True


class PatientJobManager(procrastinate.manager.JobManager):
    """procrastinate's job manager for a worker that rides over a database outage: what
    its worker does while jobs run (its heartbeat, its fetch of the next job, the end of a
    job in the queue, the abort requests it polls, its listener) waits for the database,
    trying again every `retry` seconds, up to `patience` seconds of outage; then it fails
    as procrastinate's own does and the worker stops. Its running jobs meanwhile go on:
    procrastinate would stop the worker, and its jobs, at the first failed heartbeat.
    (A submission does not wait: the API answers 503 at once.)"""

    def __init__(self, connector: procrastinate.BaseConnector, retry: float,
                 patience: float) -> None:
        super().__init__(connector)
        self.retry = retry
        self.patience = patience
        self._away_since: float | None = None
        # the queue's jobs this process's workers took and have not yet ended or retried,
        # and those workers: a job `doing` for one of them that none holds is an orphan (a
        # fetch whose answer a failover lost; `JobWorker.reap`)
        self.held: set[int] = set()
        self.fetchers: set[int] = set()
        # the worker's own "a job is waiting" (what it is told when a job is queued)
        self._wake: NotificationCallback | None = None

    async def _patiently(self, call: Callable[[], Awaitable[T]]) -> T:
        while True:
            try:
                result = await call()
            except UNREACHABLE as e:
                if not away(e):
                    raise
                now = time.monotonic()
                if self._away_since is None:
                    self._away_since = now
                    logger.warning("job queue: the database is away (%s); the worker waits "
                                   "for it, its jobs go on (JOB_OUTAGE_SECONDS: %g)",
                                   type(e).__name__, self.patience)
                if now - self._away_since > self.patience:
                    raise
                await asyncio.sleep(self.retry)
                continue
            if self._away_since is not None:
                logger.warning("job queue: the database is back after %.1f s",
                               time.monotonic() - self._away_since)
                self._away_since = None
            return result

    async def update_heartbeat(self, worker_id: int) -> None:
        await self._patiently(lambda: super(PatientJobManager, self).update_heartbeat(
            worker_id))

    async def fetch_job(self, queues: Iterable[str] | None, worker_id: int
                        ) -> procrastinate.jobs.Job | None:
        self.fetchers.add(worker_id)
        job = await self._patiently(lambda: super(PatientJobManager, self).fetch_job(
            queues=queues, worker_id=worker_id))
        if job is not None and job.id is not None:
            self.held.add(job.id)
        return job

    async def finish_job(self, job: procrastinate.jobs.Job, status: procrastinate.jobs.Status,
                         delete_job: bool) -> None:
        await self._once(job, lambda: super(PatientJobManager, self).finish_job(
            job, status, delete_job))
        await self._lock_freed(job)

    async def retry_job(self, job: procrastinate.jobs.Job, retry_at: Any = None,
                        priority: int | None = None, queue: str | None = None,
                        lock: str | None = None) -> None:
        await self._once(job, lambda: super(PatientJobManager, self).retry_job(
            job, retry_at=retry_at, priority=priority, queue=queue, lock=lock))
        await self._lock_freed(job)

    async def _lock_freed(self, job: procrastinate.jobs.Job) -> None:
        """A job of a lock has ended: the lock's next job may run now. procrastinate looks
        for jobs again only when one is queued or at its next poll (seconds later), so the
        worker is told, as when a job is queued (it has a free slot: this job's)."""
        if job.lock is not None and job.id is not None and self._wake is not None:
            await self._wake(channel="", notification=JobInserted(type="job_inserted",
                                                                  job_id=job.id))

    async def _once(self, job: procrastinate.jobs.Job, change: Callable[[], Awaitable[None]]
                    ) -> None:
        """`change` of a `doing` job (its end, its retry), patiently, and once: a try whose
        commit went through but whose answer a failover lost left the job no longer
        `doing`, which procrastinate would refuse again (an error, not an outage); so
        does a job another worker's reaper ended meanwhile."""
        tried = False

        async def doing() -> bool:
            return any(queued.status == "doing"
                       for queued in await self.list_jobs_async(id=job.id))

        async def attempt() -> None:
            nonlocal tried
            if tried and not await doing():
                return
            tried = True
            try:
                await change()
            except procrastinate.exceptions.ConnectorException as e:
                if away(e) or await doing():
                    raise

        await self._patiently(attempt)
        self.held.discard(job.id)

    async def list_jobs_to_abort_async(self, queue: str | None = None) -> Iterable[int]:
        return await self._patiently(
            lambda: super(PatientJobManager, self).list_jobs_to_abort_async(queue))

    async def listen_for_jobs(self, *, on_notification: NotificationCallback,
                              queues: Iterable[str] | None = None) -> None:
        self._wake = on_notification
        async def listening() -> None:
            await super(PatientJobManager, self).listen_for_jobs(
                on_notification=on_notification, queues=queues)
        await self._patiently(listening)
