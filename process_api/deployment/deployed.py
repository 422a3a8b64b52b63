"""Processes deployed through the API (OGC API Processes Part 2), stored in
`processes.deployed` (a row per revision) and kept in memory by every API process and
worker, up to date through LISTEN/NOTIFY: a deployment, replacement or undeployment is
seen everywhere at once, with no restart. A process not yet in memory (its notification
on its way) is read from the database.

Who sees one: `public` (deployed by an admin): anyone; `project`: the members of its
project; `private`: its owner; admins see all. Its owner and admins may replace or
undeploy it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from process_api.data.file_inputs import current_file_inputs
from process_api.deployment import queries
from process_api.deployment.cwl import FILE_NAME, RUN_ENTRY, TARGET_NAME, CwlProcess
from process_api.processes.definition import Process, ProcessKind
from stac_ext.platform.access import Resource, Visibility

logger = logging.getLogger("geocatalog.jobs")

CHANNEL = "geocatalog_processes"
#: How long a listener that lost its connection waits before it connects again.
RECONNECT_SECONDS = 2.0


class DuplicateProcess(Exception):
    """A process of that id is deployed already."""


@dataclass(frozen=True)
class Deployment:
    """One revision of a deployed process: the process, and who owns and sees it."""

    process: Process
    revision: int
    owner: str
    project: str | None
    visibility: str
    media_type: str
    package: str

    @property
    def resource(self) -> Resource:
        """The process as the access table takes it."""
        return Resource("process", owner=self.owner, project=self.project,
                        visibility=cast(Visibility, self.visibility))


def _deployment(row: dict[str, Any]) -> Deployment:
    about = row["description"]
    process = Process(
        id=row["id"], version=about["version"], title=about["title"],
        description=about["description"], inputs=current_file_inputs(about["inputs"]),
        outputs=about["outputs"],
        # run in the job's own process, folder and sandbox, the package beside it
        entry=RUN_ENTRY, files={FILE_NAME: row["cwl"], TARGET_NAME: about["target"]},
        sync=True, kind=ProcessKind.DEPLOYED,
        images=tuple(about.get("images") or ()), workflow=bool(about.get("workflow")))
    return Deployment(process=process, revision=row["revision"], owner=row["owner"],
                      project=row["project"], visibility=row["visibility"],
                      media_type=row["media_type"], package=row["package"])


class Deployed:
    def __init__(self, dsn: str, pool: AsyncConnectionPool) -> None:
        self.dsn = dsn
        self.pool = pool
        self._current: dict[str, Deployment] = {}

    # -- reading ---------------------------------------------------------------------

    def all(self) -> list[Deployment]:
        return sorted(self._current.values(), key=lambda d: d.process.id)

    async def current(self, process_id: str) -> Deployment | None:
        """The deployed process of that id now (read from the database when this process
        has not heard of it yet)."""
        known = self._current.get(process_id)
        if known is not None:
            return known
        return await self._refresh(process_id)

    async def twin(self, process_id: str) -> str | None:
        """The id, as it was deployed, of the process this id names without regard to
        case."""
        row = await self._one(queries.DEPLOYED_ID_WITHOUT_CASE, id=process_id)
        return None if row is None else str(row["id"])

    async def revision(self, process_id: str, revision: int) -> Deployment | None:
        """A given revision (a job runs the one it was submitted with), retired or not."""
        known = self._current.get(process_id)
        if known is not None and known.revision == revision:
            return known
        row = await self._one(queries.DEPLOYED_REVISION, id=process_id, revision=revision)
        return _deployment(row) if row else None

    async def _one(self, query: str, **params: Any) -> dict[str, Any] | None:
        async with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(query, params)
            return await cur.fetchone()

    async def _refresh(self, process_id: str) -> Deployment | None:
        row = await self._one(queries.DEPLOYED_NOW, id=process_id)
        if row is None:
            self._current.pop(process_id, None)
            return None
        found = _deployment(row)
        self._current[process_id] = found
        return found

    # -- writing ---------------------------------------------------------------------

    async def deploy(self, package: CwlProcess, process_id: str, version: str, owner: str,
                     project: str | None, visibility: str, media_type: str, body: str,
                     replacing: Deployment | None = None) -> Deployment:
        """A new process, or (`replacing`) a new revision of one: the revision before is
        retired in the same transaction. DuplicateProcess when it exists (deploy), or was
        replaced or undeployed meanwhile (replace)."""
        description = {"title": package.title, "description": package.description,
                       "version": version, "inputs": package.inputs,
                       "outputs": package.outputs, "target": package.target,
                       "images": list(package.images), "workflow": package.workflow}
        try:
            async with self.pool.connection() as conn, conn.transaction(), \
                    conn.cursor(row_factory=dict_row) as cur:
                if replacing is not None:
                    await cur.execute(queries.LOCK_DEPLOYED, {"id": process_id})
                    now = await cur.fetchone()
                    if now is None or now["revision"] != replacing.revision:
                        raise DuplicateProcess(process_id)
                    await cur.execute(queries.RETIRE_DEPLOYED, {"id": process_id})
                await cur.execute(queries.INSERT_DEPLOYED, {
                    "id": process_id, "owner": owner, "project": project,
                    "visibility": visibility, "media_type": media_type, "package": body,
                    "cwl": package.document, "description": Jsonb(description)})
                row = await cur.fetchone()
        except psycopg.errors.UniqueViolation:
            raise DuplicateProcess(process_id) from None
        assert row is not None
        found = _deployment(row)
        self._current[process_id] = found  # this process answers with it at once
        return found

    async def undeploy(self, deployment: Deployment) -> bool:
        """Whether it was still deployed (not undeployed or replaced meanwhile)."""
        async with self.pool.connection() as conn, conn.transaction():
            locked = await (await conn.execute(queries.LOCK_DEPLOYED,
                                               {"id": deployment.process.id})).fetchone()
            if locked is None:
                return False
            await conn.execute(queries.RETIRE_DEPLOYED, {"id": deployment.process.id})
        self._current.pop(deployment.process.id, None)
        return True

    # -- keeping up ------------------------------------------------------------------

    async def listening(self) -> None:
        """Keep the processes in memory up to date until cancelled: all of them read again
        after each (re)connection, then each one named by a notification."""
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                        self.dsn, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    await self._load_all(conn)
                    async for notice in conn.notifies():
                        await self._refresh(notice.payload)
            except (psycopg.Error, OSError) as e:
                logger.warning("deployed processes: listening again in %.0f s (%s)",
                               RECONNECT_SECONDS, type(e).__name__)
                await asyncio.sleep(RECONNECT_SECONDS)

    async def _load_all(self, conn: psycopg.AsyncConnection[Any]) -> None:
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(queries.CURRENT_DEPLOYED)
            rows: Sequence[dict[str, Any]] = await cur.fetchall()
        self._current = {row["id"]: _deployment(row) for row in rows}
