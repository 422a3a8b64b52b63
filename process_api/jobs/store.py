"""The job records: one row per job in `processes.jobs`, over a psycopg pool."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from process_api.jobs import queries

Job = dict[str, Any]
#: A job's record before it is written (`new_job`).
NewJob = dict[str, Any]
#: Who reads, as the access table's SQL takes a caller (`Caller.reader`): None anonymous,
#: {"all": true} an administrator, else {"user": name, "groups": [...]}.
Reader = dict[str, Any] | None


def new_job(process_id: str, owner: str, project: str | None, inputs: dict[str, Any],
            secrets: str | None, resources: dict[str, Any] | None,
            service_url: str | None = None, api_url: str | None = None,
            subscriber: dict[str, Any] | None = None,
            trace_context: dict[str, str] | None = None,
            process_revision: int | None = None,
            staging: list[dict[str, Any]] | None = None) -> NewJob:
    """The record of a job to submit, its id chosen (`process_revision`: of a deployed
    process, the revision it runs)."""
    return {"id": str(uuid.uuid4()), "process_id": process_id, "owner": owner,
            "project": project, "inputs": inputs, "secrets": secrets,
            "resources": resources or {}, "service_url": service_url, "api_url": api_url,
            "subscriber": subscriber or None, "trace_context": trace_context or None,
            "process_revision": process_revision, "staging": staging or None}


@dataclass(frozen=True)
class JobQuery:
    """Which of a caller's jobs a job list shows (OGC Part 1 `job-list`); None: any."""

    process_ids: tuple[str, ...] | None = None
    statuses: tuple[str, ...] | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None
    min_duration: float | None = None  # seconds
    max_duration: float | None = None
    none: bool = False  # nothing matches (e.g. a job type this service has not)

    def params(self) -> dict[str, Any]:
        return {"process_ids": list(self.process_ids) if self.process_ids else None,
                "statuses": list(self.statuses) if self.statuses else None,
                "created_from": self.created_from, "created_to": self.created_to,
                "min_duration": self.min_duration, "max_duration": self.max_duration,
                "none": self.none}


class JobStore:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def _one(self, query: str, **params: Any) -> Job | None:
        async with self.pool.connection() as conn:
            return await _fetch_one(conn, query, params)

    @staticmethod
    async def create(conn: AsyncConnection, jobs: list[NewJob]) -> list[Job]:
        """The new jobs' records, in order, written on `conn` in one statement (in the
        transaction that also queues them)."""
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(queries.INSERT_JOBS, {"jobs": Jsonb(jobs)})
            written = {str(row["id"]): row for row in await cur.fetchall()}
        return [written[job["id"]] for job in jobs]

    async def get(self, job_id: uuid.UUID | str) -> Job | None:
        return await self._one(queries.GET_JOB, id=job_id)

    async def visible(self, job_id: uuid.UUID, reader: Reader) -> Job | None:
        """The job, if the reader sees it (`queries.GET_VISIBLE_JOB`)."""
        return await self._one(queries.GET_VISIBLE_JOB, id=job_id, reader=Jsonb(reader))

    async def list(self, reader: Reader, query: JobQuery, limit: int, offset: int
                   ) -> list[Job]:
        """The jobs the reader sees that `query` asks for, newest first."""
        async with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(queries.LIST_JOBS, {
                "reader": Jsonb(reader), **query.params(), "limit": limit, "offset": offset})
            return await cur.fetchall()

    async def start(self, job_id: uuid.UUID | str, queue_job_id: int | None) -> Job | None:
        """accepted -> running: the job, or None (dismissed, or another worker's)."""
        return await self._one(queries.START_JOB, id=job_id, queue_job_id=queue_job_id)

    async def progress(self, job_id: uuid.UUID | str, progress: int, message: str | None) -> None:
        await self._one(queries.PROGRESS, id=job_id, progress=max(0, min(100, progress)),
                        message=message)

    async def finish(self, job_id: uuid.UUID | str, status: str, message: str,
                     results: dict[str, Any] | None = None,
                     resources: dict[str, Any] | None = None,
                     provenance: dict[str, Any] | None = None) -> Job | None:
        """The ended job, or None when it had ended already (e.g. dismissed)."""
        return await self._one(queries.FINISH_JOB, id=job_id, status=status, message=message,
                               results=Jsonb(results) if results is not None else None,
                               resources=Jsonb(resources) if resources is not None else None,
                               provenance=Jsonb(provenance) if provenance is not None
                               else None)

    async def requeue(self, job_id: uuid.UUID | str, message: str) -> None:
        await self._one(queries.REQUEUE_JOB, id=job_id, message=message)

    @staticmethod
    async def requeue_on(conn: AsyncConnection, job_id: uuid.UUID | str, message: str) -> bool:
        """running -> accepted on `conn` (in the transaction that queues it again): whether
        the job was running."""
        cur = await conn.execute(queries.REQUEUE_JOB, {"id": job_id, "message": message})
        return cur.rowcount == 1

    async def dismiss(self, job_id: uuid.UUID | str) -> Job | None:
        return await self._one(queries.DISMISS_JOB, id=job_id)

    async def append_log(self, job_id: uuid.UUID | str, text: str, dropped: int,
                         keep: int) -> None:
        """More of a job's output; its record keeps the last `keep` characters."""
        await self._one(queries.APPEND_LOG, id=job_id, text=text, dropped=dropped, max=keep)

    async def log(self, job_id: uuid.UUID | str) -> tuple[str, int]:
        """A job's output so far, and how many characters before it were let go."""
        row = await self._one(queries.GET_LOG, id=job_id)
        return (row["text"], row["dropped"]) if row else ("", 0)

    async def clear_log(self, job_id: uuid.UUID | str) -> None:
        await self._one(queries.CLEAR_LOG, id=job_id)

    async def set_batch_job(self, job_id: uuid.UUID | str, batch_job: str) -> None:
        """The scheduler's id of the job's run, kept for a worker that reattaches."""
        await self._one(queries.SET_BATCH_JOB, id=job_id, batch_job=batch_job)

    @staticmethod
    async def holding(conn: AsyncConnection, owners: Sequence[str], projects: Sequence[str]
                      ) -> dict[str, int]:
        """The jobs queued or running of each owner (`user:<name>`) and project
        (`project:<name>`), each locked on `conn` until its transaction ends (the count
        holds until the transaction's new jobs are written); and each owner's turn, the
        lowest queue priority of their jobs waiting (`turn:<name>`, when any wait)."""
        holders = [*(f"user:{o}" for o in owners), *(f"project:{p}" for p in projects)]
        await conn.execute(queries.LOCK_QUOTA_HOLDERS, {"holders": holders})
        cur = await conn.execute(queries.ACTIVE_BY_HOLDER, {"owners": list(owners),
                                                            "projects": list(projects)})
        return {holder: jobs for holder, jobs in await cur.fetchall()}

    async def ping(self) -> None:
        """Nothing, once the database has answered (else what its absence raises)."""
        await self._one(queries.PING)

    async def status(self, job_id: uuid.UUID | str) -> str | None:
        row = await self._one(queries.JOB_STATUS, id=job_id)
        return row["status"] if row else None


async def _fetch_one(conn: AsyncConnection, query: str, params: dict[str, Any]) -> Job | None:
    """The first row `query` returns, as a dict (None if none, or if it returns no rows)."""
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(query, params)
        return await cur.fetchone() if cur.description else None
