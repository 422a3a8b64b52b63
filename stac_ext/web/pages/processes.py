"""The process list, and a process's page: its description and its execute form."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Header, Path, Request
from fastapi.responses import HTMLResponse

from stac_ext.platform.sessions.signed_in import signed_in
from stac_ext.web.public_api import get_json
from stac_ext.web.schema_form import form_fields
from stac_ext.web.templating import page

router = APIRouter()


def _mount(request: Request) -> str:
    """Where the process API is mounted (`PROCESSES_PREFIX`)."""
    return str(request.app.state.web.processes_prefix)


@router.get("/ui/processes")
async def process_list(request: Request,
                       authorization: str | None = Header(default=None)) -> HTMLResponse:
    """The processes the caller may run (the browser's session: those deployed for them or
    their projects too); to one who may deploy, the way to the deploy form."""
    status, body = await get_json(request, f"{_mount(request)}/processes",
                                  authorization=authorization)
    return page(request, "processes.html", {"processes": (body or {}).get("processes", []),
                                            "may_deploy": _may_deploy(request)},
                status_code=status)


def _may_deploy(request: Request) -> bool:
    """Whether the signed-in user holds the right to deploy (administrators do): only to
    offer the form; the API decides each request."""
    face = request.app.state.web
    user = signed_in(request)
    return user is not None and bool({face.deploy_right, face.admin_right} & set(user.rights))


@router.get("/ui/deploy")
async def deploy_page(request: Request) -> HTMLResponse:
    """Deploying a process (OGC API Processes Part 2): a CWL document or an OGC application
    package, pasted or from a file, for its deployer, a project or (administrators) all;
    the form posts it to the API in the browser, with the user's sign-in."""
    face = request.app.state.web
    user = signed_in(request)
    return page(request, "deploy.html", {
        "may_deploy": _may_deploy(request), "deploy_right": face.deploy_right,
        "admin": user is not None and face.admin_right in user.rights})


@router.get("/ui/fragments/processes")
async def process_list_fragment(request: Request,
                                authorization: str | None = Header(default=None)
                                ) -> HTMLResponse:
    status, body = await get_json(request, f"{_mount(request)}/processes",
                                  authorization=authorization)
    return page(request, "fragments/process_list.html",
                {"processes": (body or {}).get("processes", [])}, status_code=status)


@router.get("/ui/processes/{process_id}")
async def process_page(request: Request, process_id: str = Path(max_length=200),
                       authorization: str | None = Header(default=None)) -> HTMLResponse:
    """A shell its script fills with the fragment below; a 404, as the API answers, for a
    process there is not for the caller (it answered 200, its script saying so)."""
    url = f"{_mount(request)}/processes/{quote(process_id, safe='')}"
    status, _ = await get_json(request, url, authorization=authorization)
    return page(request, "process.html", {"process_id": process_id},
                status_code=404 if status == 404 else 200)


@router.get("/ui/fragments/processes/{process_id}")
async def process_fragment(request: Request, process_id: str = Path(max_length=200),
                           authorization: str | None = Header(default=None)) -> HTMLResponse:
    """The description and execute form, as the API describes the process to this caller."""
    status, body = await get_json(request, f"{_mount(request)}/processes/{process_id}",
                                  authorization=authorization)
    if status != 200:
        return page(request, "fragments/error.html", {"error": body}, status_code=status)
    return page(request, "fragments/process.html", {
        "process": body, "fields": form_fields(body.get("inputs") or {})})
