"""The processes' endpoints of Part 1 (`ProcessRoutes`): the processes offered, a process's
description, its execution (a job's submission; answered at once, or with its results when
the job ends in time)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import Depends, Header, Query, Request
from fastapi.responses import JSONResponse

from process_api.api.documents import (
    JSON,
    OGC_PROFILE,
    api_base,
    description,
    ogc_description,
    summary,
)
from process_api.api.errors import OgcError
from process_api.api.input_errors import in_words
from process_api.api.models import ExecuteRequest
from process_api.api.preferences import ASYNC, sync_preference
from process_api.api.route_factory import RouteFactory
from process_api.api.service import (
    Caller,
    OptionalCallerDependency,
)
from process_api.data.file_inputs import as_contents
from process_api.jobs.job_status import JobStatus
from process_api.jobs.quotas import RETRY_SECONDS, QueueFull
from process_api.jobs.status import status_info
from process_api.processes.outbound import TargetRefused, check_reachable
from process_api.processes.resources import resource_problems
from stac_ext.platform.access import Resource, require


async def _check_subscriber(subscriber: dict[str, str]) -> None:
    """A callback the outbound policy forbids is refused now, not dropped when it is due
    (the worker checks again when it sends: an address can change)."""
    for which, url in subscriber.items():
        try:
            await check_reachable(url)
        except TargetRefused as e:
            raise OgcError(400, "invalid-input", f"subscriber.{which}: {e}") from None


@dataclass
class ProcessRoutes(RouteFactory):
    """The list, describe and execute endpoints, one method registering each on `router`.
    `optional_user`: the caller or None; `sync_wait_seconds`: the longest a synchronous
    execution request waits; `body_checks`: dependencies run before a body is used."""

    prefix = "/processes"
    tags = ("Processes",)
    endpoints = ("list_processes", "describe", "execute")
    optional_user: OptionalCallerDependency
    sync_wait_seconds: float = 30
    body_checks: Sequence[Callable[..., Any]] = ()

    def register_list_processes(self) -> None:
        @self.router.get(
            "", summary="The processes offered")
        async def list_processes(request: Request,
                                 caller: Caller | None = Depends(self.optional_user)) -> dict:
            """Without a token: the built-in processes and the public deployed ones; with
            one, also those deployed for the caller and their projects."""
            base = api_base(request)
            return {"processes": [summary(p, base) for p in self.service.offered(caller)],
                    "links": [{"rel": "self", "type": JSON, "href": f"{base}processes"}]}

    def register_describe(self) -> None:
        @self.router.get(
            "/{process_id}", summary="A process, with its inputs and outputs schemas")
        async def describe(process_id: str, request: Request,
                           caller: Caller = Depends(self.user),
                           profile: Annotated[Literal["ogc"] | None, Query()] = None) -> dict:
            """`inputs` and `outputs` are the JSON Schemas of the execution body's
            `processInputs` and of the results. `profile=ogc`: OGC's process description
            instead (inputs and outputs by id, each with its schema)."""
            process, _ = await self.service.find(process_id, caller)
            if profile == OGC_PROFILE:
                return ogc_description(process, api_base(request))
            return description(process, api_base(request))

    def register_execute(self) -> None:
        @self.router.post(
            "/{process_id}/execution", status_code=201,
            summary="Execute a process: creates a job",
            dependencies=[Depends(check) for check in self.body_checks],
            responses={200: {"description": "The results (synchronous execution)"},
                       422: {"description": "The job failed (synchronous execution)"},
                       429: {"description": "Too many jobs of the caller or the "
                                            "project queued or running (`Retry-After`)"}})
        async def execute(process_id: str, body: ExecuteRequest, request: Request,
                          caller: Caller = Depends(self.user),
                          prefer: Annotated[str | None, Header(max_length=1024)] = None,
                          ) -> JSONResponse:
            """201 with the job's status and its `Location`. A process whose
            jobControlOptions has `sync-execute` answers 200 with its results to `Prefer:
            respond-sync` or `Prefer: wait=N` when the job ends in time (else 201,
            `Preference-Applied: respond-async`); a job that fails then is a 422 with its
            message."""
            service = self.service
            process, revision = await service.find(process_id, caller)
            inputs = as_contents(body.process_inputs(), process.inputs)
            errors = sorted(process.inputs_validator.iter_errors(inputs),
                            key=lambda e: list(e.absolute_path))
            if errors:
                listed = "; ".join(in_words(e) for e in errors)
                raise OgcError(400, "invalid-input", "processInputs do not match the "
                               f"process's inputs schema: {listed}")
            if problems := resource_problems(inputs.get("resources"), service.ceilings):
                raise OgcError(400, "invalid-input", "processInputs ask for more than a job "
                               f"may have: {'; '.join(problems)}")
            project = body.metadata.project if body.metadata else None
            require(service.as_caller(caller), "share", Resource("job", project=project))
            subscriber = body.subscriber.model_dump(exclude_none=True) if body.subscriber else None
            await _check_subscriber(subscriber or {})
            base = api_base(request)
            # a database away answers 503 (errors.py) and leaves neither record nor queue entry
            try:
                job = await service.submit(process, revision, caller, project, inputs,
                                           service_url=str(request.base_url), api_url=base,
                                           subscriber=subscriber)
            except QueueFull as e:
                raise OgcError(429, "too-many-jobs", str(e),
                               headers={"Retry-After": str(RETRY_SECONDS)}) from None
            location = f"{base}jobs/{job['id']}"
            wait = sync_preference(prefer, self.sync_wait_seconds) if process.sync else None
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
