"""The jobs' endpoints of Part 1 (`JobRoutes`): the caller's jobs, a job's status, results,
provenance, files and log, and its dismissal."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Header, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

from process_api.api.documents import JSON, api_base
from process_api.api.errors import OgcError, no_such_job
from process_api.api.job_list import job_query
from process_api.api.route_factory import RouteFactory
from process_api.api.service import (
    Caller,
    OptionalCallerDependency,
)
from process_api.api.user_files import file_headers, served_type
from process_api.data.staging import CHUNK
from process_api.jobs.job_log import LOG_CHARS
from process_api.jobs.job_status import ENDED, JobStatus
from process_api.jobs.provenance import PROV_JSON, provenance
from process_api.jobs.ro_crate import RO_CRATE, ro_crate
from process_api.jobs.secrets import PLACEHOLDER
from process_api.jobs.status import status_info
from process_api.jobs.store import JobQuery


@dataclass
class JobRoutes(RouteFactory):
    """The jobs' endpoints, one method registering each on `router`. `file_reader`: a job's
    files' reader (a token of the process client or the data client), or None."""

    prefix = "/jobs"
    tags = ("Jobs",)
    endpoints = ("list_jobs", "get_job", "results", "prov", "job_file", "logs", "dismiss")
    file_reader: OptionalCallerDependency

    def register_list_jobs(self) -> None:
        @self.router.get("", summary="Your jobs and your projects' jobs")
        async def list_jobs(
            request: Request, caller: Caller = Depends(self.user),
            query: JobQuery = Depends(job_query),
            limit: Annotated[int, Query(ge=1, le=1000)] = 100,
            offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
        ) -> dict:
            """Newest first, `limit` per page with `next` and `prev` links. Filters (OGC
            Part 1 `job-list`): `type`, `processID` and `status` (lists: repeated or
            comma-separated), `datetime` (created within), `minDuration` and
            `maxDuration` (seconds run so far or in all; jobs not started are then left
            out)."""
            rows = await self.service.jobs(caller, query, limit + 1, offset)
            base = api_base(request)
            links = [{"rel": "self", "type": JSON, "href": str(request.url)}]
            if len(rows) > limit:
                links.append({"rel": "next", "type": JSON, "href": str(
                    request.url.include_query_params(offset=offset + limit, limit=limit))})
            if offset > 0:
                links.append({"rel": "prev", "type": JSON, "href": str(
                    request.url.include_query_params(offset=max(0, offset - limit),
                                                     limit=limit))})
            return {"jobs": [status_info(row, base) for row in rows[:limit]], "links": links}

    def register_get_job(self) -> None:
        @self.router.get("/{job_id}", summary="A job's status")
        async def get_job(job_id: str, request: Request,
                          caller: Caller = Depends(self.user)) -> dict:
            return status_info(await self.service.visible_job(job_id, caller),
                               api_base(request))

    def register_results(self) -> None:
        @self.router.get("/{job_id}/results", summary="A job's results, once it is successful")
        async def results(job_id: str, caller: Caller = Depends(self.user)) -> Any:
            job = await self.service.visible_job(job_id, caller)
            if job["status"] == JobStatus.SUCCESSFUL:
                return job["results"]
            if job["status"] == JobStatus.FAILED:
                raise OgcError(404, "job-results-failed", job["message"] or "The job failed.")
            raise OgcError(404, "result-not-ready", f"The job is {job['status']}.")

    def register_prov(self) -> None:
        @self.router.get(
            "/{job_id}/prov", summary="What the job read and wrote (W3C PROV-JSON)",
            responses={200: {"content": {"application/ld+json": {}}}})
        async def prov(job_id: str, request: Request, caller: Caller = Depends(self.user),
                       accept: Annotated[str | None, Header(max_length=1024)] = None
                       ) -> Response:
            """The job (an activity) with its owner and process; each file it read, with the
            item and asset it came from, its href and checksum; each file it wrote; each
            item published from one. To `Accept: application/ld+json`: the same as a
            Workflow Run RO-Crate's metadata. A dismissed job that published items keeps
            it: the items outlive the job."""
            job = await self.service.provenance_job(job_id, caller)
            if job["status"] not in ENDED:  # dismissed: once finished, with published items
                raise OgcError(404, "result-not-ready", f"The job is {job['status']}.")
            if "application/ld+json" in (accept or ""):
                return Response(ro_crate(job, api_base(request)), media_type=RO_CRATE)
            return Response(provenance(job, api_base(request)), media_type=PROV_JSON)

    def register_job_file(self) -> None:
        @self.router.get(
            "/{job_id}/files/{path:path}", summary="A file a job wrote",
            response_class=StreamingResponse,
            responses={200: {"content": {"application/octet-stream": {}}}})
        async def job_file(job_id: str, path: str,
                           caller: Caller | None = Depends(self.file_reader)
                           ) -> StreamingResponse:
            """A file of the service's results store, for whoever may read the job; a file
            published as an item, also for whoever may read the item (after the job is
            dismissed too). Without a token, a file nobody may read so is a 401, as any
            other of a job's addresses (missing or not: none is told apart)."""
            try:
                store, key, written = await self.service.job_file(job_id, path, caller)
            except OgcError as e:
                if caller is None and e.status_code == 404:
                    raise HTTPException(401, "Authentication required: no token.",
                                        {"WWW-Authenticate": "Bearer"}) from None
                raise
            source = await asyncio.to_thread(store.open, key)

            async def chunks() -> AsyncIterator[bytes]:
                try:
                    while chunk := await asyncio.to_thread(source.read, CHUNK):
                        yield chunk
                finally:
                    await asyncio.to_thread(source.close)

            return StreamingResponse(chunks(), media_type=served_type(written["type"]),
                                     headers=file_headers(key, written["size"]))

    def register_logs(self) -> None:
        @self.router.get(
            "/{job_id}/logs", summary="What the job's process wrote, so far",
            response_class=PlainTextResponse,
            description="stdout and stderr of the job's process and of what it starts, "
            "as text, while it runs and after; the job's secret inputs are replaced by "
            f"`{PLACEHOLDER}`, and only the last {LOG_CHARS:,} characters are kept (a "
            "first line then says how many went before).",
            responses={200: {"content": {"text/plain": {}}}})
        async def logs(job_id: str, caller: Caller = Depends(self.user)) -> PlainTextResponse:
            job = await self.service.visible_job(job_id, caller)
            text, dropped = await self.service.log(job)
            if dropped:
                text = f"[{dropped} earlier characters not kept]\n{text}"
            return PlainTextResponse(text)

    def register_dismiss(self) -> None:
        @self.router.delete(
            "/{job_id}", summary="Dismiss a job")
        async def dismiss(job_id: str, request: Request,
                          caller: Caller = Depends(self.user)) -> Response:
            """Stops a queued or running job, drops a finished job's results and its files
            in the service's results store, except those published as items (nothing in
            the caller's own storage, no item); 200 with its status `dismissed`. The job
            is then gone for its owner and project (404 `no-such-job`, not in the job
            list)."""
            job = await self.service.visible_job(job_id, caller)
            dismissed = await self.service.dismiss(job, caller)
            if dismissed is None:  # dismissed meanwhile by another request
                raise no_such_job(job_id)
            return JSONResponse(status_info(dismissed, api_base(request)))
