"""Jobs submitted, as the API side does it: each recorded and queued in one transaction,
within its owner's and project's quotas (counted in that transaction, under their locks),
submissions that arrive together written together (the composition root's group commit);
the wait of a synchronous execution; a dismissal."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import procrastinate
import psycopg
from opentelemetry import propagate
from psycopg_pool import AsyncConnectionPool

from process_api.jobs.job_status import ENDED
from process_api.jobs.metrics import JOBS_REFUSED
from process_api.jobs.queue import TASK
from process_api.jobs.quotas import QueueFull, Quotas
from process_api.jobs.store import Job, JobStore, NewJob, new_job

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


@dataclass(frozen=True)
class Submissions:
    """Where the API's new jobs go: recorded and queued (on `queue`) within their quotas."""

    store: JobStore
    app: procrastinate.App
    queue_pool: AsyncConnectionPool
    queue: str
    quotas: Quotas
    gather: Gather

    async def submit(self, process_id: str, owner: str, project: str | None,
                     inputs: dict[str, Any], secrets: str | None,
                     resources: dict[str, Any] | None, **record: Any) -> Job:
        """Record a job and queue its id, in one transaction: a job is never recorded
        without being queued, nor queued without its record (the worker that takes it
        starts it, once). Submissions made while others are being written are written
        together by the next transaction (`gather`): one statement records them all, one
        queues them all, one commit. QueueFull beyond a quota."""
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
            by_turn: dict[tuple[str, int], list[NewJob]] = {}
            for job in accepted:  # each user's in the order submitted
                by_turn.setdefault((job["lock"], job["priority"]), []).append(job)
            for (lock, priority), locked in by_turn.items():
                await self.app.configure_task(TASK, queue=self.queue, lock=lock,
                                              priority=priority,
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

    async def dismiss(self, job: Job) -> Job | None:
        """Mark the job dismissed: a queued one is never started (the worker that takes it
        finds it dismissed); a running one's supervisor sees it within a poll and kills
        its process (aborting through procrastinate would cancel the supervising task
        mid-await)."""
        return await self.store.dismiss(job["id"])
