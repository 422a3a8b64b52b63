"""The worker side of the job engine (`JobWorker`, handed its parts: `WorkerParts`):
procrastinate's worker runs each job (`run_job`) on its executor (`runner.executors`: a
fork server of this worker, a sandbox of the job's own, its containers, or Slurm), in a
cgroup of its own; it relays progress into the job record, ends the job's run on dismissal
or at its wall time, records the job's end (`job_end`; again, while the database is away),
and reaps the jobs of workers that died, deciding in one place whether such a job runs
again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

import procrastinate
from opentelemetry import propagate, trace
from procrastinate.jobs import Status
from psycopg_pool import AsyncConnectionPool

from process_api.jobs import queries
from process_api.jobs.callbacks import IN_PROGRESS, Notifier
from process_api.jobs.catalog import ProcessCatalog
from process_api.jobs.job_data import JOB_DATA_PREFIX, DataConfig, JobData, run_with_data
from process_api.jobs.job_end import callback, metric_label, recorded, told
from process_api.jobs.job_status import JobStatus
from process_api.jobs.metrics import JOBS_STARTED
from process_api.jobs.queue import TASK, UNREACHABLE, PatientJobManager, away
from process_api.jobs.reattach import Reattachment
from process_api.jobs.secrets import PLACEHOLDER, SecretBox, merge_secrets
from process_api.jobs.store import Job, JobStore
from process_api.jobs.supervisor import Supervisor
from process_api.jobs.tasks import cancelled
from process_api.processes.resources import Ceilings, ResourceError, plan
from process_api.runner.cgroups import Cgroups
from process_api.runner.executor import Executor
from process_api.runner.executors import Executors
from process_api.runner.orphans import forget_dead_folders

logger = logging.getLogger("geocatalog.jobs")

WORKER_DIED = ("The worker running this job stopped (crash or kill) before it finished.")
WORKER_STOPPED = "The worker running this job was shut down before the job finished."
FOREIGN_GRACE = 3  # times the stalled time a worker waits on another queue's job
DATABASE_AWAY = ("The database was unreachable while this job ran: its worker could not "
                 "follow it, and stopped it. Submit it again.")


@dataclass(frozen=True)
class WorkerParts:
    """What a worker runs jobs with: the job records and procrastinate's queue (its app, its
    queue's name, the pool its transactions take), the processes, the secrets' box, the
    jobs' ceilings, how their data moves, its executors, the callbacks' sender, the
    tracer of its jobs' spans, the database URL a job's process gets, whether jobs run in
    a sandbox and in cgroups, and its times (heartbeat, stalled, shutdown, outage, poll)."""

    store: JobStore
    app: procrastinate.App
    queue: str
    queue_pool: AsyncConnectionPool
    catalog: ProcessCatalog
    box: SecretBox
    ceilings: Ceilings
    data: DataConfig
    executors: Executors
    notifier: Notifier
    tracer: trace.Tracer
    job_dsn: str
    sandboxed: bool = True
    cgroups: bool = True
    heartbeat: float = 2.0
    stalled: float = 10.0
    shutdown: float = 10.0
    outage: float = 300.0
    poll: float = 5.0


class JobWorker:
    """What runs jobs in this process: its executors, its cgroups, the jobs it ran."""

    def __init__(self, parts: WorkerParts) -> None:
        self.parts = parts
        self.store, self.app = parts.store, parts.app
        self.executors = parts.executors
        # jobs' cgroups, looked for when the worker starts (`cgroups` False: never)
        self.cgroups: Cgroups | None = None
        # the procrastinate workers running in this process now: alive while it runs
        self._own_workers: set[int] = set()
        # jobs of this worker that met the database away: how they end says so
        self._lost: set[str] = set()
        # the queue's jobs this process's workers took and none holds, as the last reap
        # found them (an orphan is reaped when two reaps in a row find it)
        self._orphans: set[int] = set()
        # jobs of workers that died or stopped: run again, or ended with their runs
        self.batches = Reattachment(self.store, parts.executors)

    async def run(self, concurrency: int = 2, install_signal_handlers: bool = True,
                  name: str | None = None) -> None:
        """Process queued jobs until cancelled (or stopped by a signal), reaping jobs of dead
        workers meanwhile. When the database goes away longer than the worker waits it
        out, the engine's worker stops: it is started again once the database answers."""
        parts = self.parts
        if parts.cgroups and self.cgroups is None:
            self.cgroups = await asyncio.to_thread(Cgroups.available)
        # what dead workers of this host left: their jobs' data folders, their containers
        await asyncio.to_thread(forget_dead_folders, JOB_DATA_PREFIX)
        logger.info("job ceilings: %s; %s",
                    self.cgroups.describe() if self.cgroups else "rlimits (no cgroups)",
                    parts.ceilings.describe())
        await self.executors.start()  # the first job needs not wait
        reaper = asyncio.create_task(self._reap_forever())
        try:
            while True:
                try:
                    await self.app.run_worker_async(
                        queues=[parts.queue], concurrency=concurrency, name=name or "worker",
                        install_signal_handlers=install_signal_handlers,
                        update_heartbeat_interval=parts.heartbeat,
                        # a worker silent through an outage it waits out is not pruned
                        stalled_worker_timeout=parts.stalled + parts.outage,
                        abort_job_polling_interval=0.5, fetch_job_polling_interval=parts.poll,
                        shutdown_graceful_timeout=parts.shutdown,
                    )
                    return
                except procrastinate.exceptions.ConnectorException as e:
                    # a new worker (a new id) is started next; the old one's jobs are reaped
                    self._own_workers.clear()
                    self._manager.fetchers.clear()
                    logger.warning("job worker: %s (%s); starting again in %g s",
                                   "the database is away" if away(e) else
                                   "the job queue refused its query",
                                   type(e.__cause__).__name__, parts.heartbeat)
                    await asyncio.sleep(parts.heartbeat)
        finally:
            self._own_workers.clear()
            await cancelled(reaper)
            await self.executors.stop()

    async def _reap_forever(self) -> None:
        """`reap` every heartbeat; after an outage, not before every live worker has
        beaten since this one regained the database (every heartbeat is late then, and
        none says a worker died)."""
        away, grace = False, self.parts.stalled + self.parts.heartbeat
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
                                   "trying every %g s", type(e).__name__, self.parts.heartbeat)
                away = True
            except Exception:
                logger.exception("reaping stalled jobs failed")
            await asyncio.sleep(self.parts.heartbeat)

    async def reap(self) -> None:
        """Jobs whose worker stopped heart-beating, retried or failed: its own queue's at
        once, another's (whose workers may run jobs elsewhere) after FOREIGN_GRACE times."""
        manager, seconds, own = self.app.job_manager, self.parts.stalled, self.parts.queue
        stalled = [*await manager.get_stalled_jobs(seconds_since_heartbeat=seconds, queue=own),
                   *(queued for queued in await manager.get_stalled_jobs(
                       seconds_since_heartbeat=seconds * FOREIGN_GRACE) if queued.queue != own)]
        for queued in [*(queued for queued in stalled if queued.worker_id not in
                         self._own_workers | self._manager.fetchers),
                       # this process runs those: alive, their heartbeats only late (the
                       # process was paused, or its event loop blocked, longer than the
                       # stalled time); but not those of its jobs it never got
                       *await self._orphaned()]:
            async with self.parts.queue_pool.connection() as conn, conn.transaction():
                claimed = await (await conn.execute(queries.CLAIM_STALLED, {
                    "id": queued.id, "worker": queued.worker_id})).fetchone()
                if claimed and claimed[0]:  # else another reaper has, or had, it
                    await self._reaped(queued)

    @property
    def _manager(self) -> PatientJobManager:
        manager = self.app.job_manager
        assert isinstance(manager, PatientJobManager)
        return manager

    async def _orphaned(self) -> list[procrastinate.jobs.Job]:
        """Jobs the queue says this process's workers took that none of them holds: a
        fetch whose commit reached the new primary and whose answer a failover lost (the
        worker, alive, took another). Those found by the last reap too: a fetch just
        answered is held a moment after the database says it is `doing`."""
        manager, found = self._manager, []
        for worker in list(manager.fetchers):
            found += [queued for queued in await manager.list_jobs_async(
                status="doing", worker_id=worker) if queued.id not in manager.held]
        orphans, self._orphans = self._orphans, {queued.id for queued in found
                                                 if queued.id is not None}
        return [queued for queued in found if queued.id in orphans]

    async def _reaped(self, queued: procrastinate.jobs.Job) -> None:
        """A stalled job, claimed: queued again, or failed."""
        manager = self.app.job_manager
        job = await self.store.get(str(queued.task_kwargs.get("job_id")))
        if job is not None and job["status"] == JobStatus.ACCEPTED:
            # its worker took it from the queue but never started it (an orphan, a worker
            # killed in between): it never ran, and now runs once
            await manager.retry_job(queued)
            logger.warning("job %s: taken by a worker that never started it, queued again",
                           job["id"])
            return
        if job is not None and job["status"] == JobStatus.RUNNING:
            job_id = str(job["id"])

            async def again(_: Job) -> None:
                await self.store.requeue(job_id, "worker died; queued again")
                await manager.retry_job(queued)

            away = job_id in self._lost
            self._lost.discard(job_id)
            if await self._after_loss(job, again, DATABASE_AWAY if away else WORKER_DIED,
                                      "died"):
                return
        await manager.finish_job(queued, status=Status.FAILED, delete_job=False)

    async def _after_loss(self, job: Job, again: Callable[[Job], Awaitable[None]],
                          failure: str, how: str) -> bool:
        """A running job whose worker died or stopped before it ended, decided here only:
        queued again (`again`) when its run goes on at a scheduler (the next worker
        reattaches to it) or its process allows another attempt; else failed saying
        `failure`, what is left of its run abandoned. Whether it was queued again."""
        job = await self.batches.recorded(job)
        process = self.parts.catalog.builtin(job["process_id"])
        if self.batches.again(job, process):
            await again(job)
            logger.warning("job %s: worker %s, queued again", job["id"], how)
            return True
        await self.batches.end(job)
        failed = await self.store.finish(job["id"], JobStatus.FAILED, failure)
        logger.warning("job %s: worker %s, job failed", job["id"], how)
        await self._ended(job, failed)
        return False

    async def run_job(self, context: procrastinate.JobContext, job_id: str) -> None:
        """The job engine's task: one job, from its record's start to its end."""
        if context.job.worker_id is not None:
            self._own_workers.add(context.job.worker_id)
        started = await self._started(job_id, context.job.id)
        if started is None:
            return  # dismissed while queued, or already handled
        JOBS_STARTED.labels(metric_label(started)).inc()
        with self.parts.tracer.start_as_current_span(
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
                await self._ended(started, await self._persistently(job_id, partial(
                    self.store.finish, job_id, JobStatus.FAILED, f"The service could not run this "
                    f"job ({type(e).__name__}); the error has been logged.")))

    async def _started(self, job_id: str, queue_job_id: int | None) -> Job | None:
        """The job's record started (`JobStore.start`), again every heartbeat while the
        database is away (a job taken just before a failover starts on the new primary,
        never left `accepted`)."""
        away = False
        while True:
            try:
                return await self.store.start(job_id, queue_job_id)
            except UNREACHABLE as e:
                if not away:
                    logger.warning("job %s: its start waits for the database (%s)", job_id,
                                   type(e).__name__)
                away = True
                await asyncio.sleep(self.parts.heartbeat)

    async def _execute(self, context: procrastinate.JobContext, job_id: str,
                       started: Job) -> None:
        callback(self.parts.notifier, started, IN_PROGRESS)
        parts = self.parts
        process = await parts.catalog.process_of(started)
        if process is None:
            await self._ended(started, await self.store.finish(
                job_id, JobStatus.FAILED, f"Process {started['process_id']} is not offered by this "
                "worker."))
            return
        resources = started["inputs"].get("resources") or dict(process.resources or {})
        try:
            limits = plan(resources, parts.ceilings, local=self.executors.local)
        except (ResourceError, ValueError) as e:
            await self._ended(started, await self.store.finish(job_id, JobStatus.FAILED,
                                                               f"Resources: {e}."))
            return
        secrets = parts.box.open(started["secrets"])
        inputs = merge_secrets(started["inputs"], secrets)
        hide = [v for _, v in secrets if isinstance(v, str) and v and v != PLACEHOLDER]
        about = {"id": str(started["id"]), "owner": started["owner"],
                 "project": started["project"], "service_url": started.get("service_url")}
        provenance = None
        executor = self.executors.of(process.deployed, process.network or process.database,
                                     bool(process.images))
        if process.deployed:
            outcome, provenance = await run_with_data(
                JobData(parts.data, started, inputs), process, limits, about, hide,
                partial(self._supervisor, context, started),
                own=executor, publishing=self.executors.publishing,
                sandboxed=parts.sandboxed, dismissed=partial(self._dismissed, context, job_id))
        else:
            outcome = await self._supervisor(context, started, executor).run(
                process, inputs, limits, about, hide)
        await self._ended(started, await self._persistently(job_id, partial(
            recorded, self.store, job_id, process, outcome, hide, limits, provenance)))

    async def _dismissed(self, context: procrastinate.JobContext, job_id: str) -> bool:
        """Whether the job was dismissed (or its queue job aborted) meanwhile."""
        return context.should_abort() or await self.store.status(job_id) == JobStatus.DISMISSED

    def _supervisor(self, context: procrastinate.JobContext, started: Job,
                    executor: Executor) -> Supervisor:
        job_id = str(started["id"])
        return Supervisor(self.store, job_id, context, self.parts.job_dsn, executor,
                          self.cgroups, sandboxed=self.parts.sandboxed,
                          lost=partial(self._lost.add, job_id),
                          batch_id=started.get("batch_job"), account=started.get("project"))

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
                await asyncio.sleep(self.parts.heartbeat)

    async def _stopped(self, started: Job, lock: str | None) -> None:
        """A job this worker ended because the worker is stopping: queued again (for
        another worker, or this one once started again), or failed (`_after_loss`); never
        left running. One stopped for the database's outage fails saying so."""
        job_id = str(started["id"])
        if job_id in self._lost:
            self._lost.discard(job_id)
            await self._ended(started, await self.store.finish(job_id, JobStatus.FAILED,
                                                               DATABASE_AWAY))
            return

        async def again(_: Job) -> None:
            async with self.parts.queue_pool.connection() as conn, conn.transaction():
                if await JobStore.requeue_on(conn, job_id, "worker stopped; queued again"):
                    await self.app.configure_task(
                        TASK, queue=self.parts.queue, lock=lock, connection=conn
                    ).defer_async(job_id=job_id)

        await self._after_loss(await self.store.get(job_id) or started, again,
                               WORKER_STOPPED, "stopping")

    async def _ended(self, started: Job, job: Job | None) -> None:
        """A job this worker started and ended, told (`job_end.told`)."""
        await told(self.parts.notifier, started, job)


def _submitted_by(carrier: dict[str, str] | None) -> list[trace.Link]:
    """The link from a job's run to the request that submitted it (none if untraced)."""
    context = trace.get_current_span(propagate.extract(carrier or {})).get_span_context()
    return [trace.Link(context)] if context.is_valid else []
