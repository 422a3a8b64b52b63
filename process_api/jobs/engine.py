"""The job engine: procrastinate on the same PostgreSQL, one OS process per job, composed
from the process API's settings (`Engine.from_settings`). Its parts: the pools and
procrastinate's app; for the API side, the process catalog (`catalog`), the job records
(`store`) and `submissions`; for a worker, its parts (`WorkerParts`: `run_worker` runs
one in this process, `geocatalog worker` as a process of its own).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import procrastinate
from opentelemetry import trace
from psycopg_pool import AsyncConnectionPool

from process_api.data.staging import StageLimits
from process_api.deployment import cwl_schemas
from process_api.deployment.cwl import RUN_PRELOAD
from process_api.deployment.deployed import Deployed
from process_api.jobs.callbacks import Notifier
from process_api.jobs.catalog import ProcessCatalog
from process_api.jobs.job_data import DataConfig
from process_api.jobs.job_status import JobStatus
from process_api.jobs.metrics import JOB_QUOTA, JOBS, OLDEST_QUEUED, QUEUE_STATE, WORKERS
from process_api.jobs.queue import (
    QUIET_ABORTS,
    TASK,
    PatientJobManager,
    autocommit,
    connect_timeout,
    queue_pool,
    writable,
)
from process_api.jobs.quotas import Quotas
from process_api.jobs.secrets import SecretBox
from process_api.jobs.store import JobStore
from process_api.jobs.submissions import Gather, Submissions
from process_api.jobs.tasks import cancelled
from process_api.jobs.worker import JobWorker, WorkerParts
from process_api.processes.definition import Process
from process_api.processes.registry import Registry
from process_api.processes.resources import Ceilings, parse_memory
from process_api.runner.containers import Podman
from process_api.runner.executors import EXECUTORS, Setup, SlurmSite
from process_api.runner.isolation import job_environment
from process_api.runner.sandbox import Sandbox
from process_api.runner.slurm import Slurm, SlurmError
from process_api.settings import ProcessSettings

logger = logging.getLogger("geocatalog.jobs")


def slurm_site(settings: ProcessSettings) -> SlurmSite | None:
    """The Slurm jobs run on (`JOB_EXECUTOR=slurm`); None: on the workers' hosts.
    SlurmError saying what is missing."""
    if settings.job_executor != "slurm":
        return None
    if settings.slurm_folder is None:
        raise SlurmError("JOB_EXECUTOR=slurm needs SLURM_FOLDER: a folder the workers' "
                         "hosts and Slurm's nodes share.")
    return SlurmSite(Slurm.available(settings.slurm_partition),
                     settings.slurm_folder.resolve(), settings.slurm_account)


@dataclass(frozen=True)
class PackageChecks:
    """How a deployed package is checked (its own process, in the jobs' sandbox) and where
    its images may be pulled from."""

    sandbox: Sandbox | None
    environment: dict[str, str]
    registries: tuple[str, ...]


class Engine:
    def __init__(self, settings: ProcessSettings, *, dsn: str, registry: Registry,
                 box: SecretBox, gather: Gather, results_store: str,
                 job_dsn: str | None = None, timeout: float = 2.0,
                 publisher: Process | None = None, hidden: Sequence[Path] = (),
                 tracer: trace.Tracer | None = None) -> None:
        """`dsn`: this process's role's database (the API's, a worker's); `job_dsn`: what a
        job's process that needs the database gets (a role of its own); `results_store`:
        the service's results store (an fsspec URL); `publisher`: the process that
        publishes results (None: refused); `hidden`: folders no job sees (the data dir);
        `tracer`: its jobs' spans (linked to their submissions)."""
        self.settings = settings
        self.dsn = dsn
        self.job_dsn = job_dsn or dsn
        self.tracer = tracer or trace.NoOpTracer()
        self.box = box
        self.ceilings = Ceilings(
            memory=parse_memory(settings.job_memory),
            memory_max=parse_memory(settings.job_memory_max), cpu_max=settings.job_cpu_max,
            processes=settings.job_processes, tmp_bytes=parse_memory(settings.job_tmp_size),
            wall_seconds=settings.job_wall_seconds)
        quotas = Quotas(user_running=settings.job_user_running,
                        user_queued=settings.job_user_queued,
                        project_queued=settings.job_project_queued)
        for name in ("user_running", "user_queued", "project_queued"):
            JOB_QUOTA.labels(name).set(getattr(quotas, name))
        # how deployed processes' jobs read and write data
        self.data = DataConfig(
            limits=StageLimits(files=settings.job_stage_files,
                               bytes=parse_memory(settings.job_stage_bytes),
                               stall_seconds=settings.job_stage_stall_seconds),
            result_files=settings.job_result_files, store_url=results_store,
            store_options=settings.results_store_options, publisher=publisher)
        # jobs import the service's packages (publish-dataset: all three), nothing else of it
        sandbox = Sandbox.available(hidden=list(hidden), tmp_bytes=self.ceilings.tmp_bytes,
                                    packages=("stac_ext", "catalogs_ext", "process_api")) \
            if settings.job_sandbox == "bwrap" else None
        # every job's processes start with this environment, never the worker's
        environment = job_environment(os.environ, settings.job_environment)
        self.packages = PackageChecks(sandbox, environment,
                                      tuple(settings.container_registries))
        # bounded waits: during an outage the API answers 503 at once (`timeout`)
        # autocommit: every query of the job store is one statement
        # `writable`: never a connection to a server that turned read-only (a failover)
        # `reconnect_timeout`: a pool that found the database away tries again at once
        # when a request asks, not after a backoff grown meanwhile (as `queue_pool`)
        self.pool = AsyncConnectionPool(dsn, min_size=1, max_size=8, open=False,
                                        timeout=timeout, reconnect_timeout=timeout,
                                        configure=autocommit, check=writable,
                                        kwargs={"connect_timeout": connect_timeout(timeout)})
        self.queue_pool = queue_pool(dsn, timeout)
        self.app = procrastinate.App(connector=procrastinate.PsycopgConnector())
        self.app.job_manager = PatientJobManager(
            self.app.connector, settings.job_heartbeat_seconds, settings.job_outage_seconds)
        logging.getLogger("procrastinate.worker").addFilter(QUIET_ABORTS)  # idempotent
        self.store = JobStore(self.pool)
        self.catalog = ProcessCatalog(registry, Deployed(dsn, self.pool))
        self.submissions = Submissions(self.store, self.app, self.queue_pool,
                                       settings.job_queue, quotas, gather)
        self._listening: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Engine:
        await self.pool.open()
        await self.queue_pool.open()
        await self.app.open_async(pool=self.queue_pool)
        self._listening = asyncio.create_task(self.catalog.deployed.listening())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._listening is not None:
            await cancelled(self._listening)
        await self.app.close_async()
        await self.queue_pool.close()
        await self.pool.close()

    def worker_parts(self) -> WorkerParts:
        """What a worker of this engine runs jobs with (its executors by JOB_EXECUTOR)."""
        settings = self.settings
        modules = ("process_api.runner.child",
                   *sorted({process.entry.partition(":")[0]
                            for process in self.catalog.registry if process.entry}))
        publisher = self.data.publisher
        slurm = slurm_site(settings)
        setup = Setup(
            sandbox=self.packages.sandbox, environment=self.packages.environment,
            modules=modules, preload=RUN_PRELOAD, made=cwl_schemas.made,
            podman=Podman.available(settings.container_registries)
            if settings.job_containers == "podman" else None, cgroups=settings.job_cgroups,
            registries=self.packages.registries,
            # sandboxes started ahead for deployed processes' jobs (on the worker's host)
            spares=settings.job_warm_sandboxes if slurm is None else 0,
            publishing=("process_api", *([publisher.entry.partition(":")[0]]
                                         if publisher else [])),
            slurm=slurm)
        return WorkerParts(
            store=self.store, app=self.app, queue=settings.job_queue,
            queue_pool=self.queue_pool, catalog=self.catalog, box=self.box,
            ceilings=self.ceilings, data=self.data,
            executors=EXECUTORS[settings.job_executor](setup),
            notifier=Notifier(timeout=settings.callback_timeout_seconds,
                              in_flight=settings.callbacks_in_flight),
            tracer=self.tracer, job_dsn=self.job_dsn, sandboxed=setup.sandbox is not None,
            cgroups=settings.job_cgroups, heartbeat=settings.job_heartbeat_seconds,
            stalled=settings.job_stalled_seconds, shutdown=settings.job_shutdown_seconds,
            outage=settings.job_outage_seconds, poll=settings.job_poll_seconds)

    async def run_worker(self, concurrency: int = 2, install_signal_handlers: bool = True,
                         name: str | None = None) -> None:
        """Run queued jobs in this process until cancelled (or stopped by a signal)."""
        parts = self.worker_parts()
        worker = JobWorker(parts)
        self.app.task(name=TASK, queue=parts.queue, pass_context=True)(worker.run_job)
        try:
            await worker.run(concurrency, install_signal_handlers, name)
        finally:
            await parts.notifier.drain()

    async def sample_queue(self) -> None:
        """The job store's gauges (queued and running jobs, the oldest one's wait, live
        workers), as the database says now."""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(QUEUE_STATE, {
                "stalled": self.settings.job_stalled_seconds})).fetchone()
        assert row is not None
        accepted, running, oldest, workers = row
        JOBS.labels(JobStatus.ACCEPTED).set(accepted)
        JOBS.labels(JobStatus.RUNNING).set(running)
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
