"""The caller's job list and a job's page. Jobs belong to the signed-in user, whose token only
the browser holds: these pages are shells that the page's script fills through the API."""

from __future__ import annotations

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.templating import page

router = APIRouter()
STATUSES = ("accepted", "running", "successful", "failed")


@router.get("/ui/jobs")
async def job_list(request: Request) -> HTMLResponse:
    return page(request, "jobs.html", {"statuses": STATUSES})


@router.get("/ui/jobs/{job_id}")
async def job_page(request: Request, job_id: str = Path(max_length=200)) -> HTMLResponse:
    return page(request, "job.html", {"job_id": job_id})
