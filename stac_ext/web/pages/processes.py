"""The process list, and a process's page: its description and its execute form."""

from __future__ import annotations

from fastapi import APIRouter, Header, Path, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.public_api import get_json
from stac_ext.web.schema_form import form_fields
from stac_ext.web.templating import page

router = APIRouter()


def _mount(request: Request) -> str:
    """Where the process API is mounted (`PROCESSES_PREFIX`)."""
    return str(request.app.state.web.processes_prefix)


@router.get("/ui/processes")
async def process_list(request: Request) -> HTMLResponse:
    """The processes anyone sees; signed in, its script shows the user's too
    (`process_list_fragment`, with their token: deployed for them or their projects)."""
    status, body = await get_json(request, f"{_mount(request)}/processes")
    return page(request, "processes.html", {"processes": (body or {}).get("processes", [])},
                status_code=status)


@router.get("/ui/fragments/processes")
async def process_list_fragment(request: Request,
                                authorization: str | None = Header(default=None)
                                ) -> HTMLResponse:
    status, body = await get_json(request, f"{_mount(request)}/processes",
                                  authorization=authorization)
    return page(request, "fragments/process_list.html",
                {"processes": (body or {}).get("processes", [])}, status_code=status)


@router.get("/ui/processes/{process_id}")
async def process_page(request: Request,
                       process_id: str = Path(max_length=200)) -> HTMLResponse:
    """A shell: describing a process takes the user's token, which only the browser holds;
    its script fetches the fragment below with it."""
    return page(request, "process.html", {"process_id": process_id})


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
