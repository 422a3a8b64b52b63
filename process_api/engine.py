"""The job engine: procrastinate on the same PostgreSQL, one OS process per job.

`Engine.submit` records nothing itself (the API writes the job record first) and queues
the job id. A worker (`run_worker`, in-process or `geocatalog worker`) runs each job in a
child process (`process_api.child`) with its resource limits, relays progress into the
job record, kills the child when the job is dismissed, and reaps jobs whose worker died.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import sys
import time
import uuid
from typing import Any

import jsonschema
import procrastinate
import psycopg
import psycopg_pool
from procrastinate.jobs import Status
from psycopg_pool import AsyncConnectionPool

from process_api.callbacks import FAILED, IN_PROGRESS, SUCCESS, Notifier
from process_api.child import EXIT_MEMORY
from process_api.definition import Process
from process_api.documents import status_info
from process_api.registry import Registry
from process_api.resources import ResourceError, plan
from process_api.secrets import PLACEHOLDER, SecretBox, merge_secrets
from process_api.store import Job, JobStore

logger = logging.getLogger("geocatalog.jobs")

TASK = "geocatalog.run_job"
ENGINE_SCHEMA = "procrastinate"
#: What a job's process never sees (it runs user-chosen code paths on user input).
WORKER_SECRETS = {"DATABASE_URL", "API_DATABASE_URL", "WORKER_DATABASE_URL",
                  "JOB_DATABASE_URL", "JOB_SECRETS_KEY", "PGPASSWORD"}
ENDED = ("successful", "failed", "dismissed")
#: How often a waiting synchronous request looks at its job.
SYNC_POLL_SECONDS = 0.02
WORKER_DIED = ("The worker running this job stopped (crash or kill) before it finished.")


def engine_connector(dsn: str, timeout: float, max_size: int = 4
                     ) -> procrastinate.PsycopgConnector:
    return procrastinate.PsycopgConnector(
        conninfo=dsn, min_size=1, max_size=max_size, timeout=timeout,
        kwargs={"options": f"-c search_path={ENGINE_SCHEMA}",
                "connect_timeout": connect_timeout(timeout)},
    )


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


_QUIET_ABORTS = QuietAborts()


class Engine:
    def __init__(self, dsn: str, registry: Registry, box: SecretBox, *, queue: str,
                 heartbeat_seconds: float = 2.0, stalled_seconds: float = 10.0,
                 timeout: float = 2.0, job_dsn: str | None = None) -> None:
        self.queue = queue
        self.dsn = dsn
        # what a job's process that needs the database gets (a role of its own)
        self.job_dsn = job_dsn or dsn
        self.registry = registry
        self.box = box
        self.heartbeat = heartbeat_seconds
        self.stalled = stalled_seconds
        # bounded waits: during an outage the API answers 503 at once (`timeout`)
        self.pool = AsyncConnectionPool(dsn, min_size=1, max_size=8, open=False,
                                        timeout=timeout,
                                        kwargs={"connect_timeout": connect_timeout(timeout)})
        self.store = JobStore(self.pool)
        self.notifier = Notifier()
        self.app = procrastinate.App(connector=engine_connector(dsn, timeout))
        logging.getLogger("procrastinate.worker").addFilter(_QUIET_ABORTS)  # idempotent
        self.app.task(name=TASK, queue=queue, pass_context=True)(self._run)

    async def __aenter__(self) -> Engine:
        await self.pool.open()
        await self.app.open_async()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.notifier.drain()
        await self.app.close_async()
        await self.pool.close()

    # -- the API side -----------------------------------------------------------------

    async def submit(self, job: Job) -> None:
        queue_job_id = await self.app.configure_task(TASK, queue=self.queue).defer_async(
            job_id=str(job["id"]))
        await self.store.set_queue_job(job["id"], queue_job_id)

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

    async def dismiss(self, job: Job) -> Job | None:
        dismissed = await self.store.dismiss(job["id"])
        if dismissed and job["status"] in ("accepted", "running") and job.get("queue_job_id"):
            # todo -> cancelled (never starts). A running one is not aborted through the
            # engine (that would cancel the supervising task mid-await): the supervisor
            # sees `dismissed` in the record within a poll and kills the child.
            await self.app.job_manager.cancel_job_by_id_async(job["queue_job_id"])
        return dismissed

    # -- the worker side --------------------------------------------------------------

    async def run_worker(self, concurrency: int = 2, install_signal_handlers: bool = True,
                         name: str | None = None) -> None:
        """Process queued jobs until cancelled (or stopped by a signal), reaping jobs of dead
        workers meanwhile. When the database goes away the engine's worker stops: it is
        started again once the database answers (its jobs meanwhile are reaped)."""
        reaper = asyncio.create_task(self._reap_forever())
        try:
            while True:
                try:
                    await self.app.run_worker_async(
                        queues=[self.queue], concurrency=concurrency, name=name or "worker",
                        install_signal_handlers=install_signal_handlers,
                        update_heartbeat_interval=self.heartbeat,
                        stalled_worker_timeout=self.stalled,
                        abort_job_polling_interval=0.5,
                    )
                    return
                except procrastinate.exceptions.ConnectorException as e:
                    logger.warning("job worker: the database is away (%s); starting again "
                                   "in %.0f s", type(e.__cause__).__name__, self.heartbeat)
                    await asyncio.sleep(self.heartbeat)
        finally:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper

    async def _reap_forever(self) -> None:
        while True:
            try:
                await self.reap()
            except (procrastinate.exceptions.ConnectorException, psycopg.Error,
                    psycopg_pool.PoolTimeout, OSError) as e:  # away: next round
                logger.warning("reaping stalled jobs: the database is away (%s)",
                               type(e).__name__)
            except Exception:
                logger.exception("reaping stalled jobs failed")
            await asyncio.sleep(self.heartbeat)

    async def reap(self) -> None:
        """Jobs whose worker stopped heart-beating, on any queue: retried or failed, never
        left running."""
        manager = self.app.job_manager
        for queued in await manager.get_stalled_jobs(seconds_since_heartbeat=self.stalled):
            assert queued.id is not None  # jobs read from the queue have ids
            job = await self.store.by_queue_job(queued.id)
            process = self.registry.get(job["process_id"]) if job else None
            if job and job["status"] == "running" and process and \
                    job["attempts"] <= process.retries:
                await self.store.requeue(job["id"], "worker died; queued again")
                await manager.retry_job(queued)
                logger.warning("job %s: worker died, queued again", job["id"])
                continue
            if job:
                failed = await self.store.finish(job["id"], "failed", WORKER_DIED)
                logger.warning("job %s: worker died, job failed", job["id"])
                if failed is not None:
                    self._callback(failed, FAILED)
            await manager.finish_job(queued, status=Status.FAILED, delete_job=False)

    async def _run(self, context: procrastinate.JobContext, job_id: str) -> None:
        job = await self.store.get(job_id)
        if job is None or job["status"] != "accepted":
            return  # dismissed while queued, or already handled
        process = self.registry.get(job["process_id"])
        if process is None:
            await self.store.finish(job_id, "failed", f"Process {job['process_id']} is not "
                                    "offered by this worker.")
            return
        try:
            limits = plan(job["inputs"].get("resources") or dict(process.resources or {}))
        except (ResourceError, ValueError) as e:
            await self.store.finish(job_id, "failed", f"Resources: {e}.")
            return
        started = await self.store.start(job_id, limits.record)
        if started is None:
            return
        self._callback(started, IN_PROGRESS)
        secrets = self.box.open(started["secrets"])
        inputs = merge_secrets(started["inputs"], secrets)
        hide = [v for _, v in secrets if isinstance(v, str) and v and v != PLACEHOLDER]
        about = {"id": str(started["id"]), "owner": started["owner"],
                 "project": started["project"], "service_url": started.get("service_url")}
        outcome = await Supervisor(self.store, job_id, context, self.job_dsn).run(
            process, inputs, limits.child_limits(), about)
        await self._record(job_id, process, outcome, hide,
                           started["inputs"].get("resources") or dict(process.resources or {}))
        ended = await self.store.get(job_id)
        if ended is not None and ended["status"] in ("successful", "failed"):
            self._callback(ended, SUCCESS if ended["status"] == "successful" else FAILED)

    def _callback(self, job: Job, which: str) -> None:
        """The job's subscriber hears of it: its results on success, else its status."""
        body = job["results"] if which == SUCCESS else status_info(job, job["api_url"] or "/")
        self.notifier.send(str(job["id"]), job.get("subscriber"), which, body)

    async def _record(self, job_id: str, process: Process, outcome: dict[str, Any],
                      hide: list[str], resources: dict[str, Any]) -> None:
        if outcome.get("dismissed"):
            return
        if "result" in outcome:
            try:
                jsonschema.validate(outcome["result"], dict(process.outputs))
            except jsonschema.ValidationError as e:
                await self.store.finish(job_id, "failed", f"The process returned results "
                                        f"that do not match its outputs schema: {e.message}")
                return
            await self.store.finish(job_id, "successful", "finished", outcome["result"])
            return
        error = outcome.get("error") or "the process stopped without a result"
        if error == "memory" or outcome.get("returncode") == EXIT_MEMORY:
            limit = (resources.get("limits") or {}).get("memory")
            error = (f"Memory limit exceeded: the job needed more than its "
                     f"resources.limits.memory ({limit})." if limit else "Out of memory.")
        for secret in hide:  # an error text must never carry a secret
            error = error.replace(secret, PLACEHOLDER)
        await self.store.finish(job_id, "failed", error)


class Supervisor:
    """Runs one job's child process: relays progress, kills it on dismissal."""

    def __init__(self, store: JobStore, job_id: str, context: procrastinate.JobContext,
                 dsn: str) -> None:
        self.store = store
        self.job_id = job_id
        self.context = context
        self.dsn = dsn

    def environment(self, process: Process) -> dict[str, str]:
        """The worker's environment without its secrets; the database's URL only for a
        process that declares it needs the database (`Process.database`)."""
        env = {k: v for k, v in os.environ.items() if k not in WORKER_SECRETS}
        return {**env, "DATABASE_URL": self.dsn} if process.database else env

    async def run(self, process: Process, inputs: dict[str, Any], limits: dict[str, Any],
                  about: dict[str, Any]) -> dict[str, Any]:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "process_api.child",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,  # the process's prints may hold anything
            limit=2**26, env=self.environment(process),
        )
        assert child.stdin and child.stdout
        child.stdin.write(json.dumps({"entry": process.entry, "command": process.command,
                                      "inputs": inputs, "limits": limits,
                                      "job": about}).encode())
        await child.stdin.drain()
        child.stdin.close()
        watcher = asyncio.create_task(self._watch_dismissal(child))
        outcome: dict[str, Any] = {}
        try:
            async for line in child.stdout:
                message = json.loads(line)
                if "progress" in message:
                    await self.store.progress(self.job_id, message["progress"],
                                              message.get("message"))
                else:
                    outcome = message
            outcome["returncode"] = await child.wait()
        finally:
            watcher.cancel()
            if child.returncode is None:
                child.kill()
                await child.wait()
        if await self.store.status(self.job_id) == "dismissed":
            outcome["dismissed"] = True
        return outcome

    async def _watch_dismissal(self, child: asyncio.subprocess.Process) -> None:
        while child.returncode is None:
            await asyncio.sleep(0.5)
            if self.context.should_abort() or \
                    await self.store.status(self.job_id) == "dismissed":
                child.kill()
                return



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
