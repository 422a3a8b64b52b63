"""The worker side of the job engine (`Engine.run_worker`): procrastinate's worker runs
each job (`run_job`) in a process of its own, forked by a fork server of this worker
(`forkserver`, `launcher`) or started for it alone (a deployed process), in a cgroup of its
own; it relays progress into the job record, ends the job's process on dismissal or at its
wall time, records the job's end (again, while the database is away), and reaps the jobs of
workers that died.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import jsonschema
import procrastinate
import psycopg
from opentelemetry import propagate, trace
from procrastinate.jobs import Status

from process_api.deployment.cwl import RUN_PRELOAD
from process_api.jobs import queries
from process_api.jobs.callbacks import FAILED, IN_PROGRESS, SUCCESS
from process_api.jobs.job_data import JOB_DATA_PREFIX, JobData, run_with_data
from process_api.jobs.metrics import JOB_DURATION, JOBS_ENDED, JOBS_STARTED
from process_api.jobs.queue import UNREACHABLE
from process_api.jobs.reattach import Reattachment
from process_api.jobs.secrets import PLACEHOLDER, Scrubber, merge_secrets
from process_api.jobs.status import status_info
from process_api.jobs.store import Job, JobStore
from process_api.jobs.supervisor import WALL_TIME, Supervisor
from process_api.jobs.tasks import cancelled
from process_api.processes.definition import Process
from process_api.processes.resources import Plan, ResourceError, plan, quantity
from process_api.runner.cgroups import Cgroups
from process_api.runner.child import EXIT_MEMORY
from process_api.runner.container_broker import forget_dead_workspaces
from process_api.runner.containers import Podman
from process_api.runner.launcher import ForkServer, Launcher, OwnSandbox
from process_api.runner.orphans import forget_dead_folders
from process_api.runner.sandbox import JOB_PACKAGES

if TYPE_CHECKING:
    from process_api.jobs.engine import Engine

logger = logging.getLogger("geocatalog.jobs")

TASK = "geocatalog.run_job"
#: The `process` label of every deployed process's jobs.
DEPLOYED_LABEL = "deployed"
WORKER_DIED = ("The worker running this job stopped (crash or kill) before it finished.")
WORKER_STOPPED = "The worker running this job was shut down before the job finished."
FOREIGN_GRACE = 3  # times the stalled time a worker waits on another queue's job
DATABASE_AWAY = ("The database was unreachable while this job ran: its worker could not "
                 "follow it, and stopped it. Submit it again.")


class JobWorker:
    """What runs jobs in this process: its fork servers, its cgroups, the jobs it ran."""

    def __init__(self, engine: Engine, cgroups: bool = True) -> None:
        self.engine = engine
        self.store, self.app = engine.store, engine.app
        # what every job would import, imported once by the fork server
        modules = ["process_api.runner.child", *(process.entry.partition(":")[0]
                                          for process in engine.registry if process.entry)]
        sandbox, environment = engine.sandbox, engine.environment
        networks = (False, True) if sandbox is not None else (True,)
        # in a sandbox, jobs without network and jobs with it have a fork server each
        self.forks = {} if engine.executor is not None else \
            {network: ForkServer(modules, sandbox, environment, network) for network in networks}
        # deployed processes: each job in a sandbox of its own (started ahead, CWL loaded),
        # never with network; their tools' containers run by podman (cgroups: at start)
        self.own_sandbox = OwnSandbox(sandbox, environment, podman=engine.podman,
                                      preload=RUN_PRELOAD, spares=engine.spares)
        # where jobs' processes run: the fork servers here, else a scheduler's nodes
        self.launchers: dict[bool, Launcher] = dict(self.forks)
        self.deployed: Launcher = self.own_sandbox
        if engine.executor is not None:
            self.launchers = {network: engine.executor.launcher(
                sandbox, environment, network, tuple(modules)) for network in networks}
            self.deployed = engine.executor.launcher(sandbox, environment, False,
                                                     JOB_PACKAGES, engine.registries)
        # their results' publishing: a sandbox of its own too (it reads files a user's code
        # wrote), with the database
        publisher = engine.data.publisher
        self.publishing = OwnSandbox(sandbox, environment, network=True, modules=[
            "process_api", publisher.entry.partition(":")[0]] if publisher else ["process_api"])
        # jobs' cgroups, looked for when the worker starts (`cgroups` False: never)
        self._use_cgroups = cgroups
        self.cgroups: Cgroups | None = None
        # the procrastinate workers running in this process now: alive while it runs
        self._own_workers: set[int] = set()
        # jobs of this worker that met the database away: how they end says so
        self._lost: set[str] = set()
        # jobs of workers that died or stopped: run again, or ended with their Slurm jobs
        self.batches = Reattachment(self.store, engine.executor)

    async def run(self, concurrency: int = 2, install_signal_handlers: bool = True,
                  name: str | None = None) -> None:
        """Process queued jobs until cancelled (or stopped by a signal), reaping jobs of dead
        workers meanwhile. When the database goes away the engine's worker stops: it is
        started again once the database answers (its jobs meanwhile are reaped)."""
        if self._use_cgroups and self.cgroups is None:
            self.cgroups = await asyncio.to_thread(Cgroups.available)
        # what dead workers of this host left: their jobs' data folders, their containers
        await asyncio.to_thread(forget_dead_folders, JOB_DATA_PREFIX)
        if self.engine.podman is not None and self.engine.executor is None:
            await asyncio.to_thread(self._containers_ready, self.engine.podman)
        logger.info("job ceilings: %s; %s",
                    self.cgroups.describe() if self.cgroups else "rlimits (no cgroups)",
                    self.engine.ceilings.describe())
        for ahead in (self.forks[min(self.forks)], self.own_sandbox) if self.forks else ():
            await ahead.start()  # the first job needs not wait; dead workers' spares go
        reaper = asyncio.create_task(self._reap_forever())
        try:
            while True:
                try:
                    await self.app.run_worker_async(
                        queues=[self.engine.queue], concurrency=concurrency, name=name or "worker",
                        install_signal_handlers=install_signal_handlers,
                        update_heartbeat_interval=self.engine.heartbeat,
                        # a worker silent through an outage it waits out is not pruned
                        stalled_worker_timeout=self.engine.stalled + self.engine.outage,
                        abort_job_polling_interval=0.5,
                        shutdown_graceful_timeout=self.engine.shutdown,
                    )
                    return
                except procrastinate.exceptions.ConnectorException as e:
                    self._own_workers.clear()  # a new worker (a new id) is started next
                    logger.warning("job worker: the database is away (%s); starting again "
                                   "in %.0f s", type(e.__cause__).__name__, self.engine.heartbeat)
                    await asyncio.sleep(self.engine.heartbeat)
        finally:
            self._own_workers.clear()
            await cancelled(reaper)
            for forks in self.forks.values():
                await forks.stop()
            await self.own_sandbox.stop()

    def _containers_ready(self, podman: Podman) -> None:
        """Containers' cgroups found, and what dead workers of this host left removed:
        their containers, cgroups and job folders."""
        if self._use_cgroups and self.own_sandbox.cgroups is None:
            self.own_sandbox.cgroups = Cgroups.for_containers()
        try:
            if removed := podman.reap():
                logger.warning("containers of workers that are gone, removed: %s",
                               ", ".join(removed))
        except (OSError, subprocess.SubprocessError) as e:
            logger.warning("containers of workers that are gone: not listed (%s)", e)
        forget_dead_workspaces()

    async def _reap_forever(self) -> None:
        """`reap` every heartbeat; after an outage, not before every live worker has
        beaten since this one regained the database (every heartbeat is late then, and
        none says a worker died)."""
        away, grace = False, self.engine.stalled + self.engine.heartbeat
        reap_from = time.monotonic()
        while True:
            try:
                if away:  # the database answers again: the grace runs from now
                    await self.store.ping()
                    logger.warning("reaping stalled jobs: the database is back; reaping "
                                   "again in %g s", grace)
                    reap_from, away = time.monotonic() + grace, False
                elif time.monotonic() >= reap_from:
                    await self.reap()
                else:  # in the grace: an outage meanwhile is noticed all the same
                    await self.store.ping()
            except UNREACHABLE as e:  # away: next round
                if not away:
                    logger.warning("reaping stalled jobs: the database is away (%s); "
                                   "trying every %g s", type(e).__name__, self.engine.heartbeat)
                away = True
            except Exception:
                logger.exception("reaping stalled jobs failed")
            await asyncio.sleep(self.engine.heartbeat)

    async def reap(self) -> None:
        """Jobs whose worker stopped heart-beating, retried or failed: its own queue's at
        once, another's (whose workers may run jobs elsewhere) after FOREIGN_GRACE times."""
        manager, seconds, own = self.app.job_manager, self.engine.stalled, self.engine.queue
        stalled = [*await manager.get_stalled_jobs(seconds_since_heartbeat=seconds, queue=own),
                   *(queued for queued in await manager.get_stalled_jobs(
                       seconds_since_heartbeat=seconds * FOREIGN_GRACE) if queued.queue != own)]
        for queued in stalled:
            if queued.worker_id in self._own_workers:
                # this process runs it: alive, its heartbeat only late (the process was
                # paused, or its event loop blocked, longer than the stalled time)
                continue
            async with self.engine.queue_pool.connection() as conn, conn.transaction():
                claimed = await (await conn.execute(queries.CLAIM_STALLED, {
                    "id": queued.id, "worker": queued.worker_id})).fetchone()
                if claimed and claimed[0]:  # else another reaper has, or had, it
                    await self._reaped(queued)

    async def _reaped(self, queued: procrastinate.jobs.Job) -> None:
        """A stalled job, claimed: queued again, or failed."""
        manager = self.app.job_manager
        job = await self.store.get(str(queued.task_kwargs.get("job_id")))
        if job is not None and job["status"] == "running":
            job = await self.batches.recorded(job)
        process = self.engine.registry.get(job["process_id"]) if job else None
        if job and job["status"] == "running" and self.batches.again(job, process):
            await self.store.requeue(job["id"], "worker died; queued again")
            await manager.retry_job(queued)
            logger.warning("job %s: worker died, queued again", job["id"])
            return
        if job:
            await self.batches.end(job)
            failed = await self.store.finish(
                job["id"], "failed",
                DATABASE_AWAY if str(job["id"]) in self._lost else WORKER_DIED)
            self._lost.discard(str(job["id"]))
            logger.warning("job %s: worker died, job failed", job["id"])
            if failed is not None:
                self._callback(failed, FAILED)
        await manager.finish_job(queued, status=Status.FAILED, delete_job=False)

    async def run_job(self, context: procrastinate.JobContext, job_id: str) -> None:
        """The job engine's task: one job, from its record's start to its end."""
        if context.job.worker_id is not None:
            self._own_workers.add(context.job.worker_id)
        started = await self.store.start(job_id, context.job.id)
        if started is None:
            return  # dismissed while queued, or already handled
        JOBS_STARTED.labels(_metric_label(started)).inc()
        with self.engine.tracer.start_as_current_span(
                f"job {started['process_id']}", kind=trace.SpanKind.CONSUMER,
                links=_submitted_by(started.get("trace_context")),
                attributes={"geocatalog.job.id": job_id,
                            "geocatalog.job.process": started["process_id"]}):
            try:
                await self._execute(context, job_id, started)
            except asyncio.CancelledError:  # the worker is stopping: its process ended
                try:
                    await asyncio.shield(self._stopped(started, context.job.lock))
                except UNREACHABLE as e:  # the reaper ends it once the database is back
                    self._lost.add(job_id)
                    logger.warning("job %s: stopped; the database is away (%s)", job_id,
                                   type(e).__name__)
                raise
            except Exception as e:  # never left `running`: the job fails, saying so
                logger.exception("job %s: the engine failed", job_id)
                await self._ended(started, await self.store.finish(
                    job_id, "failed", f"The service could not run this job "
                    f"({type(e).__name__}); the error has been logged."))

    async def _execute(self, context: procrastinate.JobContext, job_id: str,
                       started: Job) -> None:
        self._callback(started, IN_PROGRESS)
        process = await self.engine.process_of(started)
        if process is None:
            await self._ended(started, await self.store.finish(
                job_id, "failed", f"Process {started['process_id']} is not offered by this "
                "worker."))
            return
        resources = started["inputs"].get("resources") or dict(process.resources or {})
        try:
            limits = plan(resources, self.engine.ceilings, local=self.engine.executor is None)
        except (ResourceError, ValueError) as e:
            await self._ended(started, await self.store.finish(job_id, "failed",
                                                               f"Resources: {e}."))
            return
        secrets = self.engine.box.open(started["secrets"])
        inputs = merge_secrets(started["inputs"], secrets)
        hide = [v for _, v in secrets if isinstance(v, str) and v and v != PLACEHOLDER]
        about = {"id": str(started["id"]), "owner": started["owner"],
                 "project": started["project"], "service_url": started.get("service_url")}
        provenance = None
        if process.mutable:
            outcome, provenance = await run_with_data(
                JobData(self.engine.data, started, inputs), process, limits, about, hide,
                partial(self._supervisor, context, started),
                own=self.deployed, publishing=self.publishing,
                sandboxed=self.engine.sandbox is not None,
                dismissed=partial(self._dismissed, context, job_id))
        else:
            outcome = await self._supervisor(
                context, started, self._launcher(network=process.network or process.database)
            ).run(process, inputs, limits, about, hide)
        await self._ended(started, await self._persistently(
            job_id, partial(self._record, job_id, process, outcome, hide, limits, provenance)))

    async def _dismissed(self, context: procrastinate.JobContext, job_id: str) -> bool:
        """Whether the job was dismissed (or its queue job aborted) meanwhile."""
        return context.should_abort() or await self.store.status(job_id) == "dismissed"

    def _supervisor(self, context: procrastinate.JobContext, started: Job,
                    launcher: Launcher) -> Supervisor:
        job_id, executor = str(started["id"]), self.engine.executor
        return Supervisor(self.store, job_id, context, self.engine.job_dsn, launcher,
                          self.cgroups, sandboxed=self.engine.sandbox is not None,
                          lost=partial(self._lost.add, job_id),
                          slurm_id=started.get("batch_job"),
                          account=started.get("project") or
                          (executor.account if executor is not None else None))

    async def _persistently(self, job_id: str, write: Callable[[], Awaitable[Job | None]]
                            ) -> Job | None:
        """`write` (a job's end in its record), again every heartbeat while the database
        is away: a job that ended meanwhile keeps its outcome."""
        while True:
            try:
                return await write()
            except UNREACHABLE as e:
                if job_id not in self._lost:
                    logger.warning("job %s: ended; its record waits for the database (%s)",
                                   job_id, type(e).__name__)
                self._lost.add(job_id)
                await asyncio.sleep(self.engine.heartbeat)

    async def _stopped(self, started: Job, lock: str | None) -> None:
        """A job this worker ended because the worker is stopping: queued again (for
        another worker, or this one once started again) when its process allows one more
        attempt, else failed; never left running."""
        job_id = str(started["id"])
        process = self.engine.registry.get(started["process_id"])
        if job_id in self._lost:  # it stopped for the database's outage: say so
            self._lost.discard(job_id)
            await self._ended(started, await self.store.finish(job_id, "failed",
                                                               DATABASE_AWAY))
            return
        if self.engine.executor is not None:  # its record, with its Slurm job if any
            started = await self.batches.recorded(await self.store.get(job_id) or started)
        if self.batches.again(started, process):
            async with self.engine.queue_pool.connection() as conn, conn.transaction():
                if await JobStore.requeue_on(conn, job_id, "worker stopped; queued again"):
                    await self.app.configure_task(
                        TASK, queue=self.engine.queue, lock=lock, connection=conn
                    ).defer_async(job_id=job_id)
            logger.warning("job %s: worker stopping, queued again", job_id)
            return
        await self.batches.end(started)
        await self._ended(started, await self.store.finish(job_id, "failed", WORKER_STOPPED))

    def _launcher(self, network: bool) -> Launcher:
        """What runs jobs with (or without) network."""
        return self.launchers.get(network) or self.launchers[True]

    async def _ended(self, started: Job, job: Job | None) -> None:
        """A job this worker started and ended (`job` None: it was dismissed meanwhile), in
        one line saying how (procrastinate's own line says "Success" for every job whose task
        ran to its end, failed and dismissed ones too: the logging configuration quiets it),
        and in the metrics."""
        job_id, process_id = started["id"], str(started["process_id"])
        status = "dismissed" if job is None else str(job["status"])
        JOBS_ENDED.labels(_metric_label(started), status).inc()
        JOB_DURATION.labels(_metric_label(started), status).observe(
            (((job or {}).get("finished") or datetime.now(UTC)) - started["started"]
             ).total_seconds())
        if job is None:
            logger.info("job %s: dismissed", job_id)
            return
        if job["status"] == "failed":
            reason = (str(job.get("message") or "").strip().splitlines() or ["no reason"])[0]
            logger.info("job %s (%s): failed: %s", job_id, process_id, reason)
        else:
            logger.info("job %s (%s): %s", job_id, process_id, job["status"])
        self._callback(job, SUCCESS if job["status"] == "successful" else FAILED)

    def _callback(self, job: Job, which: str) -> None:
        """The job's subscriber hears of it: its results on success, else its status."""
        if not (job.get("subscriber") or {}).get(which):
            return
        body = job["results"] if which == SUCCESS else status_info(job, job["api_url"] or "/")
        self.engine.notifier.send(str(job["id"]), job["subscriber"], which, body)

    async def _record(self, job_id: str, process: Process, outcome: dict[str, Any],
                      hide: list[str], limits: Plan, provenance: dict[str, Any] | None = None
                      ) -> Job | None:
        """The job's end in its record (not if it was dismissed meanwhile): the row."""
        applied = limits.record
        if "result" in outcome and (name := _holding_nul(outcome["result"])) is not None:
            return await self.store.finish(
                job_id, "failed", f"Output {name} holds a NUL character, which a job's "
                "record cannot keep.", resources=applied, provenance=provenance)
        if "result" in outcome:
            try:
                process.outputs_validator.validate(outcome["result"])
            except jsonschema.ValidationError as e:
                return await self.store.finish(
                    job_id, "failed", f"The process returned results that do not match its "
                    f"outputs schema: {e.message}", resources=applied)
            try:
                return await self.store.finish(job_id, "successful",
                                               outcome.get("note") or "finished",
                                               outcome["result"], resources=applied,
                                               provenance=provenance)
            except psycopg.DataError:  # e.g. half of a UTF-16 pair: its files stay its own
                return await self.store.finish(
                    job_id, "failed", "The job's results hold characters a job's record "
                    "cannot keep.", resources=applied, provenance=provenance)
        error = outcome.get("error") or "the process stopped without a result"
        ceiling = outcome.get("ceiling")
        if ceiling == "memory" or error == "memory" or \
                outcome.get("returncode") == EXIT_MEMORY:
            error = self._memory_exceeded(limits)
        elif ceiling == WALL_TIME:
            during = f" {outcome['during']}" if outcome.get("during") else ""
            error = (f"Wall time limit reached: the job ran for {limits.wall_seconds:.0f} s "
                     f"(JOB_WALL_SECONDS) and was stopped{during}.")
        elif ceiling == "processes":
            error = (f"Process limit reached: the job asked for more than {limits.processes} "
                     f"processes and threads at once (JOB_PROCESSES). {error}")
        # an error text must never carry a secret, nor a NUL (which no record keeps)
        error = Scrubber(hide)(error).replace("\x00", "\ufffd")
        return await self.store.finish(job_id, "failed", error, resources=applied,
                                       provenance=provenance)

    @staticmethod
    def _memory_exceeded(limits: Plan) -> str:
        size = quantity(limits.memory_bytes)
        where = "its resources.limits.memory" if limits.memory_asked else \
            "the default of JOB_MEMORY"
        return f"Memory limit exceeded: the job needed more than {size} ({where})."


def _holding_nul(result: dict[str, Any]) -> str | None:
    """The first output whose value holds a NUL character, or None."""
    return next((name for name, value in result.items()
                 if "\\u0000" in json.dumps(value)), None)


def _metric_label(job: Job) -> str:
    """A job's `process` label: the id of a process of the service's, `deployed` for a
    user's (its id is the user's value, and may be private)."""
    return DEPLOYED_LABEL if job.get("process_revision") is not None else \
        str(job["process_id"])


def _submitted_by(carrier: dict[str, str] | None) -> list[trace.Link]:
    """The link from a job's run to the request that submitted it (none if untraced)."""
    context = trace.get_current_span(propagate.extract(carrier or {})).get_span_context()
    return [trace.Link(context)] if context.is_valid else []
