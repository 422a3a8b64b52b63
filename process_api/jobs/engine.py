"""The job engine: procrastinate on the same PostgreSQL, one OS process per job.

`Engine.submit` records a job and queues its id in one transaction, within the quotas of
its owner and project. A worker (`run_worker`, in-process or `geocatalog worker`: the
`worker.JobWorker` of the process) runs each job in a process of its own.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import procrastinate
import psycopg
from opentelemetry import propagate, trace
from psycopg_pool import AsyncConnectionPool

from process_api.deployment.deployed import Deployed
from process_api.jobs.callbacks import Notifier
from process_api.jobs.job_data import DataConfig
from process_api.jobs.metrics import (
    JOB_QUOTA,
    JOBS,
    JOBS_REFUSED,
    OLDEST_QUEUED,
    QUEUE_STATE,
    WORKERS,
)
from process_api.jobs.queue import (
    QUIET_ABORTS,
    PatientJobManager,
    autocommit,
    connect_timeout,
    queue_pool,
)
from process_api.jobs.quotas import QueueFull, Quotas
from process_api.jobs.secrets import SecretBox
from process_api.jobs.store import Job, JobStore, NewJob, new_job
from process_api.jobs.tasks import cancelled
from process_api.jobs.worker import TASK, JobWorker
from process_api.processes.definition import Process
from process_api.processes.registry import Registry
from process_api.processes.resources import Ceilings
from process_api.runner.containers import Podman
from process_api.runner.isolation import job_environment
from process_api.runner.sandbox import Sandbox
from process_api.runner.slurm_launcher import SlurmExecutor

logger = logging.getLogger("geocatalog.jobs")

ENDED = ("successful", "failed", "dismissed")
#: How often a waiting synchronous request looks at its job.
SYNC_POLL_SECONDS = 0.02
#: What the job store refuses for one job's sake (e.g. a NUL character in its inputs):
#: jobs submitted together are then written one by one, each for its own answer.
JOB_REFUSALS = (psycopg.DataError,)
#: The composition root's group commit (`stac_ext.platform.database.group_commit`, refusing
#: `JOB_REFUSALS`): `gather(key, job, write_all)` writes the job with those waiting under
#: `key` (`write_all` writes several in one transaction) and answers its record.
Gather = Callable[[str, NewJob, Callable[[list[NewJob]],
                                         Awaitable[Sequence[Job | QueueFull]]]],
                  Awaitable[Job | QueueFull]]


class Engine:
    def __init__(self, dsn: str, registry: Registry, box: SecretBox, gather: Gather, *,
                 queue: str, heartbeat_seconds: float = 2.0, stalled_seconds: float = 10.0,
                 timeout: float = 2.0, shutdown_seconds: float = 10.0,
                 outage_seconds: float = 300.0,
                 job_dsn: str | None = None,
                 notifier: Notifier | None = None, sandbox: Sandbox | None = None,
                 environment: Mapping[str, str] | None = None,
                 ceilings: Ceilings = Ceilings(), cgroups: bool = True,
                 quotas: Quotas = Quotas(), data: DataConfig = DataConfig(),
                 tracer: trace.Tracer | None = None, podman: Podman | None = None,
                 registries: tuple[str, ...] = (),
                 executor: SlurmExecutor | None = None, spares: int = 0) -> None:
        self.queue = queue
        # a job's run as a span, linked to its submission (a no-op tracer: none)
        self.tracer = tracer or trace.NoOpTracer()
        self.dsn = dsn
        # what a job's process that needs the database gets (a role of its own)
        self.job_dsn = job_dsn or dsn
        self.registry = registry
        self.box = box
        self.ceilings = ceilings
        self.quotas = quotas
        self.data = data  # how deployed processes' jobs read and write data
        for name in ("user_running", "user_queued", "project_queued"):
            JOB_QUOTA.labels(name).set(getattr(quotas, name))
        self.sandbox = sandbox
        self.podman = podman  # runs deployed tools' containers (None: no job of one runs)
        self.registries = registries  # where a deployed package's images may be pulled from
        self.executor = executor  # runs jobs' processes on Slurm's nodes (None: here)
        # sandboxes a worker starts ahead for deployed processes' jobs (on its own host)
        self.spares = spares if executor is None else 0
        self.gather = gather
        self.heartbeat = heartbeat_seconds
        self.stalled = stalled_seconds
        # how long a stopping worker lets its running jobs finish before it ends them
        self.shutdown = shutdown_seconds
        # the longest database outage a worker waits out, its jobs running on
        self.outage = outage_seconds
        # bounded waits: during an outage the API answers 503 at once (`timeout`)
        # autocommit: every query of the job store is one statement
        self.pool = AsyncConnectionPool(dsn, min_size=1, max_size=8, open=False,
                                        timeout=timeout, configure=autocommit,
                                        kwargs={"connect_timeout": connect_timeout(timeout)})
        self.store = JobStore(self.pool)
        self.deployed = Deployed(dsn, self.pool)
        self._listening: asyncio.Task[None] | None = None
        self.notifier = notifier or Notifier()
        # every job's processes start with this environment, never the worker's
        self.environment = job_environment(os.environ) if environment is None \
            else environment
        self.queue_pool = queue_pool(dsn, timeout)
        self.app = procrastinate.App(connector=procrastinate.PsycopgConnector())
        self.app.job_manager = PatientJobManager(self.app.connector, heartbeat_seconds,
                                                 outage_seconds)
        logging.getLogger("procrastinate.worker").addFilter(QUIET_ABORTS)  # idempotent
        self.worker = JobWorker(self, cgroups)  # what runs jobs, in a worker process
        self.app.task(name=TASK, queue=queue, pass_context=True)(self.worker.run_job)

    async def __aenter__(self) -> Engine:
        await self.pool.open()
        await self.queue_pool.open()
        await self.app.open_async(pool=self.queue_pool)
        self._listening = asyncio.create_task(self.deployed.listening())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._listening is not None:
            await cancelled(self._listening)
        await self.notifier.drain()
        await self.app.close_async()
        await self.queue_pool.close()
        await self.pool.close()

    # -- the API side -----------------------------------------------------------------

    async def submit(self, process_id: str, owner: str, project: str | None,
                     inputs: dict[str, Any], secrets: str | None,
                     resources: dict[str, Any] | None, **record: Any) -> Job:
        """Record a job and queue its id, in one transaction: a job is never recorded
        without being queued, nor queued without its record (the worker that takes it
        starts it, once). Submissions made while others are being written are written
        together by the next transaction (`gather`): one statement records them all, one
        queues them all, one commit."""
        carrier: dict[str, str] = {}
        propagate.inject(carrier)  # the submitting request's trace, for the run's link
        job = new_job(process_id, owner, project, inputs, secrets, resources,
                      trace_context=carrier, **record)
        written = await self.gather(self.queue, job, self._submit_all)
        if isinstance(written, QueueFull):
            JOBS_REFUSED.labels(written.quota).inc()
            raise written
        return written

    async def _submit_all(self, jobs: list[NewJob]) -> list[Job | QueueFull]:
        """The jobs within their owners' and projects' quotas recorded and queued, in one
        transaction that counts the quotas under their holders' locks: each job's record,
        or why it was refused."""
        owners = sorted({job["owner"] for job in jobs})
        projects = sorted({job["project"] for job in jobs if job.get("project")})
        async with self.queue_pool.connection() as conn, conn.transaction():
            verdicts = self.quotas.admit(jobs, await self.store.holding(conn, owners, projects))
            accepted = [job for job, refused in zip(jobs, verdicts, strict=True)
                        if refused is None]
            records = iter(await self.store.create(conn, accepted) if accepted else [])
            by_lock: dict[str, list[NewJob]] = {}
            for job in accepted:  # each user's in the order submitted
                by_lock.setdefault(job["lock"], []).append(job)
            for lock, locked in by_lock.items():
                await self.app.configure_task(TASK, queue=self.queue, lock=lock,
                                              connection=conn).batch_defer_async(
                    *({"job_id": job["id"]} for job in locked))
        return [refused if refused is not None else next(records) for refused in verdicts]

    async def ended(self, job_id: uuid.UUID | str, seconds: float) -> Job | None:
        """The job once it has ended (successful, failed, dismissed), if it ends within
        `seconds`; else None. For a client waiting for results (`Prefer: respond-sync`)."""
        deadline = time.monotonic() + seconds
        while True:
            job = await self.store.get(job_id)
            if job is None or job["status"] in ENDED:
                return job
            if time.monotonic() >= deadline:
                return None
            await asyncio.sleep(min(SYNC_POLL_SECONDS, max(0.0, deadline - time.monotonic())))

    async def sample_queue(self) -> None:
        """The job store's gauges (queued and running jobs, the oldest one's wait, live
        workers), as the database says now."""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(QUEUE_STATE, {"stalled": self.stalled})).fetchone()
        assert row is not None
        accepted, running, oldest, workers = row
        JOBS.labels("accepted").set(accepted)
        JOBS.labels("running").set(running)
        OLDEST_QUEUED.set(float(oldest))
        WORKERS.set(workers)

    def pool_states(self) -> dict[str, dict[str, int]]:
        """The engine's connection pools: the job store's (`jobs`) and the queue's."""
        states = {}
        for name, pool in (("jobs", self.pool), ("queue", self.queue_pool)):
            stats = pool.get_stats()
            size, idle = stats.get("pool_size", 0), stats.get("pool_available", 0)
            states[name] = {"in_use": size - idle, "idle": idle, "max": pool.max_size,
                            "waiting": stats.get("requests_waiting", 0)}
        return states

    async def dismiss(self, job: Job) -> Job | None:
        """Mark the job dismissed: a queued one is never started (the worker that takes it
        finds it dismissed); a running one's supervisor sees it within a poll and kills
        its process (aborting through the engine would cancel the supervising task
        mid-await)."""
        return await self.store.dismiss(job["id"])

    async def process_of(self, job: Job) -> Process | None:
        """The process a job runs: a deployed one at the revision it was submitted with."""
        if job.get("process_revision") is not None:
            found = await self.deployed.revision(job["process_id"], job["process_revision"])
            return found.process if found else None
        return self.registry.get(job["process_id"])

    async def run_worker(self, concurrency: int = 2, install_signal_handlers: bool = True,
                         name: str | None = None) -> None:
        """Run queued jobs until cancelled (or stopped by a signal): `JobWorker.run`."""
        await self.worker.run(concurrency, install_signal_handlers, name)
