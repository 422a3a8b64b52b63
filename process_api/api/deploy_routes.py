"""Routes of OGC API Processes Part 2 (deploy, replace, undeploy; OGC Application Package
and CWL): `POST /processes`, `PUT|DELETE /processes/{id}`, `GET /processes/{id}/package`.

A package is an OGC application package (`application/ogcapppkg+json`:
`{"processDescription": {...}, "executionUnit": {"value": <CWL>, "mediaType": ...}}`) or a
CWL document (`application/cwl+yaml`, `application/cwl+json`, `application/cwl`). Who sees
the process: `visibility` (`private`, the default; `project` with `project`, one of the
deployer's groups; `public`, by an admin only), query parameters of the request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Query, Request, Response
from fastapi.responses import JSONResponse

from process_api.api.documents import api_base, summary
from process_api.api.errors import OGC2, OgcError, no_such_process
from process_api.api.route_factory import RouteFactory
from process_api.api.service import Caller, CallerDependency, ProcessService
from process_api.deployment.cwl import MAX_BYTES, MAX_DEPTH, CwlProcess, PackageError
from process_api.deployment.deployed import Deployment, DuplicateProcess
from process_api.deployment.package_check import checked
from process_api.processes.definition import id_problem
from process_api.runner.containers import pull_problem
from stac_ext.platform.access import Caller as Who
from stac_ext.platform.access import Resource, Visibility, require
from stac_ext.platform.service.errors import Forbidden

CONFORMANCE = [
    "http://www.opengis.net/spec/ogcapi-processes-2/1.0/conf/deploy-replace-undeploy",
    "http://www.opengis.net/spec/ogcapi-processes-2/1.0/conf/ogcapppkg",
    "http://www.opengis.net/spec/ogcapi-processes-2/1.0/conf/cwl",
]
APP_PACKAGE = "application/ogcapppkg+json"
CWL_TYPES = ("application/cwl+yaml", "application/cwl+json", "application/cwl")
#: The largest request body (an application package may carry its CWL as a string).
BODY_BYTES = 2 * MAX_BYTES
#: A name given as a query parameter (a project, a process of a CWL `$graph`).
Name = Annotated[str | None, Query(min_length=1, max_length=256)]
F = TypeVar("F", bound=Callable[..., Any])
_PACKAGE_BODY = {"requestBody": {"required": True, "content": {
    APP_PACKAGE: {"schema": {"type": "object", "required": ["executionUnit"], "properties": {
        "processDescription": {"type": "object"},
        "executionUnit": {"type": "object"}}}},
    **{kind: {"schema": {"type": "string"}} for kind in CWL_TYPES}}}}


def _immutable(process_id: str, base: str) -> Forbidden:
    return Forbidden(f"The process {process_id!r} is part of this service; it cannot be "
                     "replaced or undeployed through the API.", OGC2 + "immutable-process",
                     headers={"Location": f"{base}processes/{process_id}"})


async def _body(request: Request) -> bytes:
    """The request body, refused once it passes BODY_BYTES (never read whole first)."""
    received = bytearray()
    async for chunk in request.stream():
        received += chunk
        if len(received) > BODY_BYTES:
            raise OgcError(413, "payload-too-large", f"A package is at most {BODY_BYTES} "
                           "bytes.")
    return bytes(received)


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    children = value.values() if isinstance(value, dict) else \
        value if isinstance(value, list) else ()
    return max((_depth(v, level + 1) for v in children), default=level)


def _application_package(raw: bytes) -> tuple[str, dict[str, Any]]:
    """The CWL text of an OGC application package, and its process description."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        raise OgcError(400, "invalid-input", "The application package is not JSON.") from None
    if not isinstance(document, dict) or _depth(document) > MAX_DEPTH:
        raise OgcError(400, "invalid-input", "The application package is a JSON object of "
                       f"at most {MAX_DEPTH} levels.")
    unit = document.get("executionUnit")
    if isinstance(unit, list) and len(unit) == 1:
        unit = unit[0]
    if unit is None and "cwlVersion" in document:  # bare CWL, sent as an application package
        raise OgcError(400, "invalid-input", "This is CWL, sent as an OGC application "
                       "package (application/json): send it as application/cwl+json, or "
                       "wrap it in {\"executionUnit\": {\"value\": <CWL>, \"mediaType\": "
                       "\"application/cwl+json\"}}.")
    if not isinstance(unit, dict):
        raise OgcError(400, "invalid-input", "executionUnit: one object, with the CWL as "
                       "`value` and its `mediaType`.")
    if "href" in unit:
        raise OgcError(400, "invalid-input", "executionUnit.href: give the CWL by value "
                       "(`value`); this service fetches nothing when it deploys.")
    value, kind = unit.get("value"), str(unit.get("mediaType") or "application/cwl")
    if kind not in CWL_TYPES:
        raise OgcError(400, "invalid-input", f"executionUnit.mediaType {kind!r}: one of "
                       f"{', '.join(CWL_TYPES)}.")
    if isinstance(value, dict):
        value = json.dumps(value)
    if not isinstance(value, str):
        raise OgcError(400, "invalid-input", "executionUnit.value: the CWL document, as an "
                       "object or a string.")
    about = document.get("processDescription") or {}
    if not isinstance(about, dict):
        raise OgcError(400, "invalid-input", "processDescription: an object.")
    return value, about


async def _package(request: Request, target: str | None, service: ProcessService
                   ) -> tuple[CwlProcess, dict[str, Any], str, str]:
    """The deployed process's package read from the request: the process, its description
    (from the application package; empty for bare CWL), the media type and the body."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    raw = await _body(request)
    if kind in (APP_PACKAGE, "application/json"):
        text, about = _application_package(raw)
    elif kind in CWL_TYPES:
        text, about = raw.decode(errors="replace"), {}
    else:
        raise OgcError(415, "unsupported-media-type", f"A package is {APP_PACKAGE} or CWL "
                       f"({', '.join(CWL_TYPES)}), not {kind or 'untyped'}.")
    try:
        package = await checked(text, target, service.packages.sandbox,
                                service.packages.environment)
    except PackageError as e:
        raise OgcError(400, "invalid-input", str(e)) from None
    for image in package.pulled:
        if problem := pull_problem(image, service.packages.registries):
            raise OgcError(400, "invalid-input", problem)
    return package, about, kind, raw.decode(errors="replace")


def _placement(visibility: str, project: str | None, who: Who) -> str | None:
    """The project a process is deployed for (None: none), if the caller may place it so."""
    if visibility == "public":
        require(who, "publish", Resource("process"))
    if (visibility == "project") != (project is not None):
        raise OgcError(400, "invalid-input", "`project` names the project of a process "
                       "deployed with `visibility=project`, and only then.")
    require(who, "share", Resource("process", project=project))
    return project


@dataclass
class DeployRoutes(RouteFactory):
    """The deploy, replace, undeploy and package endpoints, one method registering each on
    `router`. `deployer`: a caller with the right to deploy (admins have it); `user`: any
    caller (process client token)."""

    prefix = "/processes"
    tags = ("Deploy, replace, undeploy",)
    endpoints = ("deploy", "replace", "undeploy", "package")
    deployer: CallerDependency

    async def governed(self, process_id: str, caller: Caller, base: str) -> Deployment:
        """A deployed process the caller may replace or undeploy (the service's own: 403)."""
        if self.service.is_builtin(process_id):
            raise _immutable(process_id, base)
        return await self.service.governed(process_id, caller)

    def _package_route(self, method: str, path: str, **route: Any) -> Callable[[F], F]:
        """The decorator of a route whose body is a package (`_PACKAGE_BODY` documents it:
        the route reads the body itself)."""
        return self.router.api_route(path, methods=[method], openapi_extra=_PACKAGE_BODY,
                                     **route)

    def register_deploy(self) -> None:
        @self._package_route(
            "POST", "", status_code=201, summary="Deploy a process (an application package)",
            description="201 with the process's summary and its `Location`. 409 "
            "`duplicated-process` when a deployed process has its id, 403 "
            "`immutable-process` when the service's own does, 400 naming what is wrong "
            "with the package. `w`: which process of a CWL `$graph` (default `main`, "
            "else the first).")
        async def deploy(
            request: Request, caller: Caller = Depends(self.deployer),
            visibility: Annotated[Visibility, Query()] = "private",
            project: Name = None, w: Name = None,
        ) -> JSONResponse:
            base = api_base(request)
            placed = _placement(visibility, project, self.service.as_caller(caller))
            package, about, kind, body = await _package(request, w, self.service)
            process_id = str(about.get("id") or package.id)
            if not process_id:
                raise OgcError(400, "invalid-input", "The CWL document has no `id` (nor its "
                               "application package a `processDescription.id`): it names "
                               "the process.")
            if problem := id_problem(process_id):
                raise OgcError(400, "invalid-input", f"{problem}.")
            if self.service.is_builtin(process_id):
                raise _immutable(process_id, base)
            if (twin := self.service.processes.registry.twin(process_id)) is not None:
                raise OgcError(409, OGC2 + "duplicated-process", f"The id {process_id!r} "
                               f"differs only in case from {twin.id!r}, a process of this "
                               "service; ids are unique without regard to case.")
            location = {"Location": f"{base}processes/{process_id}"}
            try:
                found = await self.service.deploy(
                    _described(package, about), process_id,
                    str(about.get("version") or "1.0.0"), caller.username, placed,
                    visibility, kind, body)
            except DuplicateProcess:
                raise await self._duplicate(process_id, caller, base) from None
            return JSONResponse(summary(found.process, base), status_code=201,
                                headers=location)

    async def _duplicate(self, process_id: str, caller: Caller, base: str) -> OgcError:
        """The 409 of a deployment whose id is taken: naming the process that has it, as
        deployed (its id may differ in case), when the caller sees it."""
        twin = await self.service.processes.deployed.twin(process_id) or process_id
        try:
            await self.service.deployment(twin, caller)
        except OgcError:  # not theirs to see: the id they gave
            return OgcError(409, OGC2 + "duplicated-process", f"A process {process_id!r} "
                            "(or one whose id differs only in case) is deployed already.")
        cased = "" if twin == process_id else " (ids are unique without regard to case)"
        return OgcError(409, OGC2 + "duplicated-process", f"A process {twin!r} is deployed "
                        f"already{cased}; replace it (PUT) instead.",
                        headers={"Location": f"{base}processes/{twin}"})

    def register_replace(self) -> None:
        @self._package_route(
            "PUT", "/{process_id}", status_code=204, summary="Replace a deployed process",
            description="Its owner or an admin. New jobs run the new package; jobs "
            "submitted before run the one they were submitted with. `visibility` and "
            "`project` stay as they were unless given.")
        async def replace(
            process_id: str, request: Request, caller: Caller = Depends(self.deployer),
            visibility: Annotated[Visibility | None, Query()] = None,
            project: Name = None, w: Name = None,
        ) -> Response:
            found = await self.governed(process_id, caller, api_base(request))
            seen_by = visibility or found.visibility
            if visibility is None:
                project = project or found.project
            placed = _placement(seen_by, project, self.service.as_caller(caller))
            package, about, kind, body = await _package(request, w, self.service)
            if about.get("id") and str(about["id"]) != process_id:
                raise OgcError(400, "invalid-input", "processDescription.id "
                               f"{about.get('id')!r} is not {process_id!r}: a replacement "
                               "keeps the id.")
            if kind in CWL_TYPES and package.id != process_id:  # bare CWL: its id names it
                raise OgcError(400, "invalid-input", (
                    f"The CWL document's id {package.id!r} is not {process_id!r}"
                    if package.id else "The CWL document has no `id`") +
                    ": a replacement keeps the id.")
            try:
                await self.service.deploy(_described(package, about), process_id,
                                          str(about.get("version") or found.process.version),
                                          found.owner, placed, seen_by, kind, body,
                                          replacing=found)
            except DuplicateProcess:
                raise OgcError(409, "conflict", f"The process {process_id!r} changed "
                               "meanwhile; read it again.") from None
            return Response(status_code=204)

    def register_undeploy(self) -> None:
        @self.router.delete(
            "/{process_id}", status_code=204, summary="Undeploy a deployed process")
        async def undeploy(process_id: str, request: Request,
                           caller: Caller = Depends(self.deployer)) -> Response:
            """Its owner or an admin. New jobs are refused (404); jobs already submitted
            run, and every job's record and results stay."""
            found = await self.governed(process_id, caller, api_base(request))
            if not await self.service.undeploy(found):
                raise no_such_process(process_id)
            return Response(status_code=204)

    def register_package(self) -> None:
        @self.router.get(
            "/{process_id}/package", summary="The package a process was deployed with",
            responses={200: {"content": {kind: {} for kind in (APP_PACKAGE, *CWL_TYPES)}}})
        async def package(process_id: str, caller: Caller = Depends(self.user)) -> Response:
            found = await self.service.deployment(process_id, caller)
            return Response(found.package, media_type=found.media_type)


def _described(package: CwlProcess, about: dict[str, Any]) -> CwlProcess:
    """The package's process as its application package's description names it."""
    title, text = about.get("title"), about.get("description")
    return replace(package, title=str(title) if title else package.title or
                   str(about.get("id") or ""),
                   description=str(text) if text else package.description)
