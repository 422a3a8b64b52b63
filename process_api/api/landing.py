"""The process API's landing page and its conformance classes (`service_router`)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from process_api.api.documents import JSON, api_base
from process_api.api.openapi30 import OPENAPI30_MEDIA_TYPE

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


def service_router(also_conforms_to: tuple[str, ...] = ()) -> APIRouter:
    """`also_conforms_to`: classes others earn for this API (its HTML pages)."""
    router = APIRouter(tags=["Service"])
    claimed = [*CONFORMANCE, *also_conforms_to]

    @router.get("/", summary="Landing page")
    async def landing(request: Request) -> dict:
        base = api_base(request)
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
