"""The caller's job list, a job's page and its provenance. The list and the job's page are
shells their scripts fill through the API (the job's page follows it as it runs); the
provenance is rendered here, as the API answers the browser's session."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Header, Path, Request
from fastapi.responses import HTMLResponse

from stac_ext.web import provenance
from stac_ext.web.public_api import get_json
from stac_ext.web.templating import page

router = APIRouter()


@router.get("/ui/jobs")
async def job_list(request: Request) -> HTMLResponse:
    return page(request, "jobs.html", {"statuses": request.app.state.web.job_statuses})


@router.get("/ui/jobs/{job_id}")
async def job_page(request: Request, job_id: str = Path(max_length=200),
                   authorization: str | None = Header(default=None)) -> HTMLResponse:
    """The shell its script fills; a 404, as the API answers, for a job there is not for
    the caller (its script then says so: the page answered 200 with "There is no job")."""
    url = f"{request.app.state.web.processes_prefix}/jobs/{quote(job_id, safe='')}"
    status, _ = await get_json(request, url, authorization=authorization)
    return page(request, "job.html", {"job_id": job_id},
                status_code=404 if status == 404 else 200)


@router.get("/ui/jobs/{job_id}/prov")
async def provenance_page(request: Request, job_id: str = Path(max_length=200),
                          authorization: str | None = Header(default=None)) -> HTMLResponse:
    """Who ran what on which inputs (with their checksums), what it wrote and published:
    the API's PROV-JSON of the job, read as the caller."""
    url = f"{request.app.state.web.processes_prefix}/jobs/{quote(job_id, safe='')}/prov"
    status, body = await get_json(request, url, authorization=authorization)
    if status != 200:
        words = (body or {}).get("detail") if isinstance(body, dict) else None
        if status == 401:
            words = "Sign in to see this job's provenance."
        return page(request, "job_provenance.html", {
            "job_id": job_id, "error": words or f"The provenance could not be read ({status})."},
            status_code=status)
    return page(request, "job_provenance.html", {"job_id": job_id, "error": None,
                                                 "prov": provenance.read_document(body)})
