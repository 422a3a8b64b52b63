"""`/` for a browser (the negotiation serves `/ui/home` there) and the conformance pages."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Header, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.facets import FACETS, facets
from stac_ext.web.public_api import get_json
from stac_ext.web.templating import page

router = APIRouter()


@router.get("/ui/home")
@router.get("/ui/")
async def home(request: Request,
               authorization: str | None = Header(default=None)) -> HTMLResponse:
    """The landing page, as the caller sees the service: the processes they may run (their
    own and their projects' deployed ones too), the variables and years of what they read."""
    prefix = request.app.state.web.data_prefix
    _, data = await get_json(request, f"{prefix}/")
    _, processes = await get_json(request, f"{request.app.state.web.processes_prefix}/processes",
                                  authorization=authorization)
    _, counted = await get_json(request, f"{prefix}/aggregate",
                                params={"aggregations": ",".join(FACETS)},
                                authorization=authorization)
    return page(request, "home.html", {
        "data_title": (data or {}).get("title", ""),
        "data_description": (data or {}).get("description", ""),
        "process_count": len((processes or {}).get("processes", [])),
        "facets": facets(counted),
    })


@router.get("/ui/conformance/{api}")
async def conformance(api: Literal["data", "processes"], request: Request) -> HTMLResponse:
    face = request.app.state.web
    path = f"{face.data_prefix if api == 'data' else face.processes_prefix}/conformance"
    status, body = await get_json(request, path)
    return page(request, "conformance.html", {
        "api": api, "classes": sorted((body or {}).get("conformsTo", []))},
        status_code=status)
