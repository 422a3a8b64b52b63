"""What the process API's routes ask of the job engine, in one typed object over the
engine's API-side parts (the process catalog, the job store, the submissions, how jobs'
data moves, the secrets' box, the ceilings, how packages are checked): the processes a
caller sees, a job's submission, the caller's jobs and a job's log, a deployment's changes.
Routes talk to it, never to the engine."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from process_api.api.errors import OgcError, no_such_job, no_such_process
from process_api.data.file_inputs import Catalog, InputRefused, publish_refusal, resolve
from process_api.data.staging import ResultsStore, files_key
from process_api.deployment.cwl import CwlProcess
from process_api.deployment.deployed import Deployment
from process_api.jobs.catalog import ProcessCatalog
from process_api.jobs.engine import Engine, PackageChecks
from process_api.jobs.job_data import DataConfig
from process_api.jobs.job_status import JobStatus
from process_api.jobs.secrets import SecretBox, split_secrets
from process_api.jobs.store import Job, JobQuery, JobStore
from process_api.jobs.submissions import Submissions
from process_api.processes.definition import Process
from process_api.processes.resources import Ceilings
from stac_ext.platform.access import Caller as Who
from stac_ext.platform.access import Resource, may, require


class Caller(Protocol):
    """Who calls (the composition root's principal)."""

    @property
    def username(self) -> str: ...

    @property
    def groups(self) -> frozenset[str]: ...


#: FastAPI dependencies the composition root hands in: the caller (a valid token of the
#: process API's client), or None without a token.
CallerDependency = Callable[..., Awaitable[Caller]]
OptionalCallerDependency = Callable[..., Awaitable[Caller | None]]


@dataclass(frozen=True)
class ProcessService:
    processes: ProcessCatalog
    store: JobStore
    submissions: Submissions
    data: DataConfig  # how deployed processes' jobs read and write data
    box: SecretBox  # seals a job's secret inputs
    ceilings: Ceilings  # the most a job may ask for
    packages: PackageChecks  # how a deployed package is checked
    as_caller: Callable[[Any], Who]  # the caller as the access table takes them
    catalog: Catalog | None = None  # the data API read as a caller (file references)

    @classmethod
    def of(cls, engine: Engine, as_caller: Callable[[Any], Who],
           catalog: Catalog | None = None) -> ProcessService:
        return cls(engine.catalog, engine.store, engine.submissions, engine.data, engine.box,
                   engine.ceilings, engine.packages, as_caller, catalog)

    # -- processes ---------------------------------------------------------------------

    def offered(self, caller: Caller | None) -> list[Process]:
        """The service's processes, and the deployed ones the caller sees (public ones
        without a caller)."""
        who = self.as_caller(caller)
        return [process for process, deployment in self.processes.every()
                if deployment is None or may(who, "read", deployment.resource)]

    async def find(self, process_id: str, caller: Caller) -> tuple[Process, int | None]:
        """The process and, deployed, the revision a job of it runs now (404 when the
        caller does not see it)."""
        process = self.processes.builtin(process_id)
        if process is not None:
            return process, None
        found = await self.deployment(process_id, caller)
        return found.process, found.revision

    def is_builtin(self, process_id: str) -> bool:
        """One of the service's own processes (not deployed through the API)."""
        return self.processes.builtin(process_id) is not None

    async def deployment(self, process_id: str, caller: Caller) -> Deployment:
        """A deployed process the caller sees (404 otherwise)."""
        found = await self.processes.deployed.current(process_id)
        if found is None or not may(self.as_caller(caller), "read", found.resource):
            raise no_such_process(process_id)
        return found

    async def governed(self, process_id: str, caller: Caller) -> Deployment:
        """A deployed process the caller may replace or undeploy (404 unseen, 403 not
        theirs)."""
        found = await self.deployment(process_id, caller)
        require(self.as_caller(caller), "change", found.resource)
        return found

    async def deploy(self, package: CwlProcess, process_id: str, version: str, owner: str,
                     project: str | None, visibility: str, media_type: str, body: str,
                     replacing: Deployment | None = None) -> Deployment:
        return await self.processes.deployed.deploy(package, process_id, version, owner,
                                                    project, visibility, media_type, body,
                                                    replacing)

    async def undeploy(self, deployment: Deployment) -> bool:
        return await self.processes.deployed.undeploy(deployment)

    # -- jobs --------------------------------------------------------------------------

    async def submit(self, process: Process, revision: int | None, caller: Caller,
                     project: str | None, inputs: dict[str, Any], **record: Any) -> Job:
        """A job of `process` recorded and queued: its secret inputs kept apart, sealed;
        the data its file inputs reference resolved as the caller (a deployed process's)."""
        staging = None
        if process.deployed:
            staging = await resolve(inputs, process.inputs, self.catalog, caller,
                                    record.get("service_url") or "/",
                                    self.data.limits.files)
            await self._stored_inputs(staging, caller, record.get("api_url") or "/")
            publish = inputs.get("publish")
            if publish is not None and self.data.publisher is None:
                raise OgcError(400, "invalid-input", "publish: this service publishes no "
                               "results.")
            if publish is not None:
                await self._publishing(
                    publish.get("visibility") or ("project" if project else "private"),
                    publish.get("catalog"), ("publish.visibility", "publish.catalog"),
                    staging, caller, project, record.get("service_url") or "/")
        elif process.publishes:
            names = (process.publishes.get("visibility", ""),
                     process.publishes.get("catalog", ""))
            schema = (process.inputs.get("properties") or {}).get(names[0]) or {}
            visibility = inputs.get(names[0], schema.get("default"))
            await self._publishing(
                visibility if isinstance(visibility, str) else None, inputs.get(names[1]),
                names, [], caller, project, record.get("service_url") or "/")
        stored, secrets = split_secrets(inputs, process.inputs)
        return await self.submissions.submit(
            process.id, caller.username, project, stored, self.box.seal(secrets),
            inputs.get("resources"), process_revision=revision, staging=staging, **record)

    async def _publishing(self, visibility: str | None, catalog: object,
                          names: tuple[str, str], staging: list[dict[str, Any]],
                          caller: Caller, project: str | None, service_url: str) -> None:
        """A job's results published for `visibility` into `catalog` (each given by the
        input `names` says), refused (400) now where publishing them would be after the
        job ran: items no wider than the staged inputs, the catalog the caller's to link
        into, as the publisher will link them."""
        if visibility is not None and (refused := publish_refusal(
                visibility, project, staging, where=names[0])) is not None:
            raise OgcError(400, "invalid-input", refused)
        if isinstance(catalog, str) and catalog and self.catalog is not None and (
                refused := await self.catalog.publish_refusal(
                    catalog, caller, project, service_url)) is not None:
            raise OgcError(400, "invalid-input", f"{names[1]}: {refused}")

    async def _stored_inputs(self, staging: list[dict[str, Any]], caller: Caller,
                             api_url: str) -> None:
        """Each file of the service's results store among the inputs (a job's, given by its
        URL or as an item's asset) given its `key`: the worker reads it from the store,
        where over HTTP it is no one. The caller reads it as the files route lets them, or
        the input is refused (404) as a missing one."""
        jobs: dict[str, Job | None] = {}  # each job's record read once
        for entry in staging:
            for file in entry["files"]:
                if (found := files_key(api_url, file["href"])) is None:
                    continue
                job_id, path = found
                if job_id not in jobs:
                    jobs[job_id] = await self.store.get(uuid.UUID(job_id))
                try:
                    await self._file_of(jobs[job_id], job_id, path, caller)
                except OgcError:
                    where = f"processInputs.{entry['input']}" + (
                        "" if entry["index"] is None else f"[{entry['index']}]")
                    raise InputRefused(404, "no-such-input", f"{where}: {file['href']} does "
                                       "not exist, or is not yours to read.") from None
                file["key"] = "/".join(found)

    async def ended(self, job_id: str, seconds: float) -> Job | None:
        return await self.submissions.ended(job_id, seconds)

    async def job(self, job_id: str) -> Job | None:
        return await self.store.get(job_id)

    async def visible_job(self, job_id: str, caller: Caller) -> Job:
        """A job the caller may read: theirs, one of their projects', any for an
        administrator (404 otherwise)."""
        try:
            key = uuid.UUID(job_id)
        except ValueError:
            raise no_such_job(job_id) from None
        job = await self.store.visible(key, self.as_caller(caller).reader)
        if job is None:
            raise no_such_job(job_id)
        return job

    async def provenance_job(self, job_id: str, caller: Caller) -> Job:
        """A job the caller may read for its provenance: a visible one, or one dismissed
        whose published items outlive it (their `has_provenance` link names it), for who
        read the job before (404 otherwise)."""
        try:
            return await self.visible_job(job_id, caller)
        except OgcError:
            try:
                job = await self.store.get(uuid.UUID(job_id))
            except ValueError:
                raise no_such_job(job_id) from None
            published = ((job or {}).get("provenance") or {}).get("published")
            if job is None or job["status"] != JobStatus.DISMISSED or not published or \
                    not may(self.as_caller(caller), "read", _job(job)):
                raise
            return job

    async def jobs(self, caller: Caller, query: JobQuery, limit: int,
                   offset: int) -> Sequence[Job]:
        """The caller's jobs and their projects' that they may read: a list of theirs, an
        administrator's too (not a search of everyone's)."""
        own = replace(self.as_caller(caller), admin=False)
        return await self.store.list(own.reader, query, limit, offset)

    async def log(self, job: Job) -> tuple[str, int]:
        return await self.store.log(job["id"])

    async def dismiss(self, job: Job, caller: Caller) -> Job | None:
        """The job dismissed, if the caller may change it (403); and its files in the
        service's store removed but for those published as items (they outlive the job:
        their items use them)."""
        require(self.as_caller(caller), "change", _job(job))
        dismissed = await self.submissions.dismiss(job)
        recorded = (dismissed or {}).get("provenance") or {}
        published = {item.get("file") for item in recorded.get("published") or []}
        dropped = [w["key"] for w in recorded.get("outputs") or []
                   if w.get("service_store") and w["href"] not in published]
        if dropped:
            store = self.data.service_store(str(job.get("api_url") or "/"))
            await asyncio.to_thread(store.remove, dropped)
        return dismissed

    async def job_file(self, job_id: str, path: str, caller: Caller | None
                       ) -> tuple[ResultsStore, str, dict[str, Any]]:
        """A file of the service's results store (its store, key and record): for who may
        read the job, or (published) one of its items; 404 otherwise."""
        try:
            job = await self.store.get(uuid.UUID(job_id))
        except ValueError:
            job = None
        return await self._file_of(job, job_id, path, caller)

    async def _file_of(self, job: Job | None, job_id: str, path: str, caller: Caller | None
                       ) -> tuple[ResultsStore, str, dict[str, Any]]:
        """`job_file` of the job's record, read."""
        missing = OgcError(404, "not-found", f"The job {job_id} has no file {path}.")
        recorded = (job or {}).get("provenance") or {}
        key = f"{job_id}/{path}"
        written = next((w for w in recorded.get("outputs") or []
                        if w.get("key") == key and w.get("service_store")), None)
        if job is None or written is None:
            raise missing
        if not await self._may_read(job, written, recorded, caller):
            raise missing
        return self.data.service_store(str(job.get("api_url") or "/")), key, written

    async def _may_read(self, job: Job, written: dict[str, Any], recorded: dict[str, Any],
                        caller: Caller | None) -> bool:
        if job["status"] != JobStatus.DISMISSED and may(self.as_caller(caller), "read",
                                                        _job(job)):
            return True
        items = [i["url"] for i in recorded.get("published") or []
                 if i.get("file") == written["href"]]
        for url in items if self.catalog is not None else ():
            assert self.catalog is not None
            try:
                await self.catalog.files({"href": url}, caller, str(job["service_url"]), 1)
                return True
            except (LookupError, ValueError):
                continue
        return False


def _job(job: Job) -> Resource:
    """A job as the access table takes it."""
    return Resource("job", owner=job["owner"], project=job.get("project"))
