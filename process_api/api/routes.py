"""Routers of the process API: landing, conformance, processes, jobs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

from process_api.api.documents import (
    JSON,
    OGC_PROFILE,
    description,
    ogc_description,
    summary,
)
from process_api.api.errors import OgcError, no_such_job
from process_api.api.input_errors import in_words
from process_api.api.job_list import job_query
from process_api.api.models import ExecuteRequest
from process_api.api.openapi30 import OPENAPI30_MEDIA_TYPE
from process_api.api.preferences import ASYNC, sync_preference
from process_api.api.service import (
    Caller,
    CallerDependency,
    OptionalCallerDependency,
    ProcessService,
)
from process_api.api.user_files import file_headers, served_type
from process_api.data.staging import CHUNK
from process_api.jobs.job_log import LOG_CHARS
from process_api.jobs.job_status import FINISHED, JobStatus
from process_api.jobs.provenance import PROV_JSON, provenance
from process_api.jobs.quotas import RETRY_SECONDS, QueueFull
from process_api.jobs.ro_crate import RO_CRATE, ro_crate
from process_api.jobs.secrets import PLACEHOLDER
from process_api.jobs.status import status_info
from process_api.jobs.store import JobQuery
from process_api.processes.outbound import TargetRefused, check_reachable
from process_api.processes.resources import resource_problems
from stac_ext.platform.access import Resource, require

CONFORMANCE = [
    "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/core",
    "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/json",
    "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/job-list",
    "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/dismiss",
    "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/oas30",
    "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/callback",
    # Part 3: a deployed process's file input may be a collection of this catalog, with
    # `bbox`, `datetime`, `filter` and `q` choosing its items (`data.file_inputs`)
    "http://www.opengis.net/spec/ogcapi-processes-3/0.0/conf/collection-input",
]


async def _check_subscriber(subscriber: dict[str, str]) -> None:
    """A callback the outbound policy forbids is refused now, not dropped when it is due
    (the worker checks again when it sends: an address can change)."""
    for which, url in subscriber.items():
        try:
            await check_reachable(url)
        except TargetRefused as e:
            raise OgcError(400, "invalid-input", f"subscriber.{which}: {e}") from None


def _base(request: Request) -> str:
    """This API's root URL: the mount point (`root_path`) on the request's host."""
    return f"{request.url.scheme}://{request.url.netloc}{request.scope.get('root_path', '')}/"


def service_router(also_conforms_to: tuple[str, ...] = ()) -> APIRouter:
    """`also_conforms_to`: classes others earn for this API (its HTML pages)."""
    router = APIRouter(tags=["Service"])
    claimed = [*CONFORMANCE, *also_conforms_to]

    @router.get("/", summary="Landing page")
    async def landing(request: Request) -> dict:
        base = _base(request)
        return {"title": "geocatalog processes",
                "description": "OGC API Processes: list, describe and execute processes; "
                               "monitor jobs and fetch their results.",
                "links": [
                    {"rel": "self", "type": JSON, "href": base},
                    {"rel": "service-desc", "type": OPENAPI30_MEDIA_TYPE,
                     "href": f"{base}api"},
                    {"rel": "service-doc", "type": "text/html", "href": f"{base}api.html"},
                    {"rel": "http://www.opengis.net/def/rel/ogc/1.0/conformance", "type": JSON,
                     "href": f"{base}conformance"},
                    {"rel": "http://www.opengis.net/def/rel/ogc/1.0/processes", "type": JSON,
                     "href": f"{base}processes"},
                    {"rel": "http://www.opengis.net/def/rel/ogc/1.0/job-list", "type": JSON,
                     "href": f"{base}jobs"}]}

    @router.get("/conformance", summary="Conformance classes")
    async def conformance() -> dict:
        return {"conformsTo": claimed}

    return router


def processes_router(service: ProcessService, user: CallerDependency,
                     optional_user: OptionalCallerDependency, sync_wait_seconds: float = 30,
                     body_checks: Sequence[Callable[..., Any]] = ()) -> APIRouter:
    """`user`: the caller (process client token); `optional_user`: the caller or None;
    `sync_wait_seconds`: the longest a synchronous execution request waits; `body_checks`:
    dependencies run before a body is used."""
    router = APIRouter(prefix="/processes", tags=["Processes"])

    @router.get("", summary="The processes offered",
                description="Without a token: the built-in processes and the public deployed "
                "ones; with one, also those deployed for the caller and their projects.")
    async def list_processes(request: Request,
                             caller: Caller | None = Depends(optional_user)) -> dict:
        base = _base(request)
        return {"processes": [summary(p, base) for p in service.offered(caller)],
                "links": [{"rel": "self", "type": JSON, "href": f"{base}processes"}]}

    @router.get("/{process_id}", summary="A process, with its inputs and outputs schemas",
                description="`inputs` and `outputs` are the JSON Schemas of the execution "
                "body's `processInputs` and of the results. `profile=ogc`: OGC's "
                "process description instead (inputs and outputs by id, each with its "
                "schema).")
    async def describe(process_id: str, request: Request, caller: Caller = Depends(user),
                       profile: Annotated[Literal["ogc"] | None, Query()] = None) -> dict:
        process, _ = await service.find(process_id, caller)
        if profile == OGC_PROFILE:
            return ogc_description(process, _base(request))
        return description(process, _base(request))

    @router.post("/{process_id}/execution", status_code=201,
                 summary="Execute a process: creates a job",
                 dependencies=[Depends(check) for check in body_checks],
                 description="201 with the job's status and its `Location`. A process "
                 "whose jobControlOptions has `sync-execute` answers 200 with its results "
                 "to `Prefer: respond-sync` or `Prefer: wait=N` when the job ends in time "
                 "(else 201, `Preference-Applied: respond-async`); a job that fails then is "
                 "a 422 with its message.",
                 responses={200: {"description": "The results (synchronous execution)"},
                            422: {"description": "The job failed (synchronous execution)"},
                            429: {"description": "Too many jobs of the caller or the "
                                                 "project queued or running (`Retry-After`)"}})
    async def execute(process_id: str, body: ExecuteRequest, request: Request,
                      caller: Caller = Depends(user),
                      prefer: Annotated[str | None, Header(max_length=1024)] = None,
                      ) -> JSONResponse:
        process, revision = await service.find(process_id, caller)
        inputs = body.process_inputs()
        errors = sorted(process.inputs_validator.iter_errors(inputs),
                        key=lambda e: list(e.absolute_path))
        if errors:
            listed = "; ".join(in_words(e) for e in errors)
            raise OgcError(400, "invalid-input", f"processInputs do not match the process's "
                           f"inputs schema: {listed}")
        if problems := resource_problems(inputs.get("resources"), service.ceilings):
            raise OgcError(400, "invalid-input", "processInputs ask for more than a job may "
                           f"have: {'; '.join(problems)}")
        project = body.metadata.project if body.metadata else None
        require(service.as_caller(caller), "share", Resource("job", project=project))
        subscriber = body.subscriber.model_dump(exclude_none=True) if body.subscriber else None
        await _check_subscriber(subscriber or {})
        base = _base(request)
        # a database away answers 503 (errors.py) and leaves neither record nor queue entry
        try:
            job = await service.submit(process, revision, caller, project, inputs,
                                       service_url=str(request.base_url), api_url=base,
                                       subscriber=subscriber)
        except QueueFull as e:
            raise OgcError(429, "too-many-jobs", str(e),
                           headers={"Retry-After": str(RETRY_SECONDS)}) from None
        location = f"{base}jobs/{job['id']}"
        wait = sync_preference(prefer, sync_wait_seconds) if process.sync else None
        if wait is None:
            return JSONResponse(status_info(job, base), status_code=201,
                                headers={"Location": location})
        ended = await service.ended(job["id"], wait.seconds)
        if ended is None:  # still going: the client monitors it as any job
            return JSONResponse(status_info(await service.job(job["id"]) or job, base),
                                status_code=201, headers={
                                    "Location": location, "Preference-Applied": ASYNC})
        headers = {"Location": location, "Preference-Applied": wait.applied}
        if ended["status"] == JobStatus.SUCCESSFUL:
            return JSONResponse(ended["results"], headers=headers)
        raise OgcError(422, "job-results-failed", ended["message"] or
                       f"The job was {ended['status']}.", headers=headers)

    return router


def jobs_router(service: ProcessService, user: CallerDependency,
                file_reader: OptionalCallerDependency) -> APIRouter:
    router = APIRouter(prefix="/jobs", tags=["Jobs"])

    @router.get("", summary="Your jobs and your projects' jobs",
                description="Newest first, `limit` per page with `next` and `prev` links. "
                "Filters (OGC Part 1 `job-list`): `type`, `processID` and `status` (lists: "
                "repeated or comma-separated), `datetime` (created within), `minDuration` "
                "and `maxDuration` (seconds run so far or in all; jobs not started are "
                "then left out).")
    async def list_jobs(
        request: Request, caller: Caller = Depends(user),
        query: JobQuery = Depends(job_query),
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    ) -> dict:
        rows = await service.jobs(caller, query, limit + 1, offset)
        base = _base(request)
        links = [{"rel": "self", "type": JSON, "href": str(request.url)}]
        if len(rows) > limit:
            links.append({"rel": "next", "type": JSON, "href": str(
                request.url.include_query_params(offset=offset + limit, limit=limit))})
        if offset > 0:
            links.append({"rel": "prev", "type": JSON, "href": str(
                request.url.include_query_params(offset=max(0, offset - limit), limit=limit))})
        return {"jobs": [status_info(row, base) for row in rows[:limit]], "links": links}

    @router.get("/{job_id}", summary="A job's status")
    async def get_job(job_id: str, request: Request, caller: Caller = Depends(user)) -> dict:
        return status_info(await service.visible_job(job_id, caller), _base(request))

    @router.get("/{job_id}/results", summary="A job's results, once it is successful")
    async def results(job_id: str, caller: Caller = Depends(user)) -> Any:
        job = await service.visible_job(job_id, caller)
        if job["status"] == JobStatus.SUCCESSFUL:
            return job["results"]
        if job["status"] == JobStatus.FAILED:
            raise OgcError(404, "job-results-failed", job["message"] or "The job failed.")
        raise OgcError(404, "result-not-ready", f"The job is {job['status']}.")

    @router.get("/{job_id}/prov", summary="What the job read and wrote (W3C PROV-JSON)",
                description="The job (an activity) with its owner and process; each file it "
                "read, with the item and asset it came from, its href and checksum; each "
                "file it wrote; each item published from one. To `Accept: "
                "application/ld+json`: the same as a Workflow Run RO-Crate's metadata.",
                responses={200: {"content": {"application/ld+json": {}}}})
    async def prov(job_id: str, request: Request, caller: Caller = Depends(user),
                   accept: Annotated[str | None, Header(max_length=1024)] = None
                   ) -> Response:
        job = await service.visible_job(job_id, caller)
        if job["status"] not in FINISHED:
            raise OgcError(404, "result-not-ready", f"The job is {job['status']}.")
        if "application/ld+json" in (accept or ""):
            return Response(ro_crate(job, _base(request)), media_type=RO_CRATE)
        return Response(provenance(job, _base(request)), media_type=PROV_JSON)

    @router.get("/{job_id}/files/{path:path}", summary="A file a job wrote",
                description="A file of the service's results store, for whoever may read "
                "the job; a file published as an item, also for whoever may read the item "
                "(after the job is dismissed too).",
                response_class=StreamingResponse,
                responses={200: {"content": {"application/octet-stream": {}}}})
    async def job_file(job_id: str, path: str,
                       caller: Caller | None = Depends(file_reader)) -> StreamingResponse:
        store, key, written = await service.job_file(job_id, path, caller)
        source = await asyncio.to_thread(store.open, key)

        async def chunks() -> AsyncIterator[bytes]:
            try:
                while chunk := await asyncio.to_thread(source.read, CHUNK):
                    yield chunk
            finally:
                await asyncio.to_thread(source.close)

        return StreamingResponse(chunks(), media_type=served_type(written["type"]),
                                 headers=file_headers(key, written["size"]))

    @router.get("/{job_id}/logs", summary="What the job's process wrote, so far",
                response_class=PlainTextResponse,
                description="stdout and stderr of the job's process and of what it starts, "
                "as text, while it runs and after; the job's secret inputs are replaced by "
                f"`{PLACEHOLDER}`, and only the last {LOG_CHARS:,} characters are kept (a "
                "first line then says how many went before).",
                responses={200: {"content": {"text/plain": {}}}})
    async def logs(job_id: str, caller: Caller = Depends(user)) -> PlainTextResponse:
        text, dropped = await service.log(await service.visible_job(job_id, caller))
        if dropped:
            text = f"[{dropped} earlier characters not kept]\n{text}"
        return PlainTextResponse(text)

    @router.delete("/{job_id}", summary="Dismiss a job",
                   description="Stops a queued or running job, drops a finished job's "
                   "results and its files in the service's results store, except those "
                   "published as items (nothing in the caller's own storage, no item); "
                   "200 with its status `dismissed`. The job is then gone for its owner "
                   "and project (404 `no-such-job`, not in the job list).")
    async def dismiss(job_id: str, request: Request, caller: Caller = Depends(user)) -> Response:
        job = await service.visible_job(job_id, caller)
        dismissed = await service.dismiss(job, caller)
        if dismissed is None:  # dismissed meanwhile by another request
            raise no_such_job(job_id)
        return JSONResponse(status_info(dismissed, _base(request)))

    return router
