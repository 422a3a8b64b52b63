"""`/` for a browser (the negotiation serves `/ui/home` there) and the conformance pages."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.public_api import get_json
from stac_ext.web.templating import page

router = APIRouter()


#: The facets the home page shows: the aggregation, and the search criterion of a bucket
FACETS = {"collection_frequency": "collections", "datetime_yearly_frequency": "datetime"}
#: Buckets shown per facet
TOP = 12


def _facets(body: Any) -> dict[str, list[dict[str, Any]]]:
    """Each facet's top buckets, with the search page's address of each."""
    found = {a.get("name"): a.get("buckets") or []
             for a in (body or {}).get("aggregations", []) if isinstance(a, dict)}
    facets: dict[str, list[dict[str, Any]]] = {}
    for name, criterion in FACETS.items():
        buckets = found.get(name, [])[:TOP]
        if criterion == "datetime":  # a year: its first to its last day
            rows = [(b["key"][:4], f"{b['key'][:4]}-01-01/{b['key'][:4]}-12-31",
                     b["frequency"]) for b in reversed(buckets)]
        else:
            rows = [(b["key"], b["key"], b["frequency"]) for b in buckets]
        facets[name] = [{"label": label, "count": count,
                         "href": "ui/search?" + urlencode({criterion: value})}
                        for label, value, count in rows]
    return facets


@router.get("/ui/home")
@router.get("/ui/")
async def home(request: Request) -> HTMLResponse:
    prefix = request.app.state.web.data_prefix
    _, data = await get_json(request, f"{prefix}/")
    _, processes = await get_json(request, f"{request.app.state.web.processes_prefix}/processes")
    _, counted = await get_json(request, f"{prefix}/aggregate",
                                params={"aggregations": ",".join(FACETS)})
    return page(request, "home.html", {
        "data_title": (data or {}).get("title", ""),
        "data_description": (data or {}).get("description", ""),
        "process_count": len((processes or {}).get("processes", [])),
        "facets": _facets(counted),
    })


@router.get("/ui/conformance/{api}")
async def conformance(api: Literal["data", "processes"], request: Request) -> HTMLResponse:
    face = request.app.state.web
    path = f"{face.data_prefix if api == 'data' else face.processes_prefix}/conformance"
    status, body = await get_json(request, path)
    return page(request, "conformance.html", {
        "api": api, "classes": sorted((body or {}).get("conformsTo", []))},
        status_code=status)
