"""The service root: a landing document linking both APIs, and a health endpoint."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse


def root_router(title: str, prefix: str, with_processes: bool) -> APIRouter:
    router = APIRouter(tags=["Service"])

    @router.get("/", summary="Service landing page")
    async def landing(request: Request) -> dict:
        base = str(request.base_url)
        links = [
            {"rel": "self", "type": "application/json", "href": base},
            {"rel": "data", "type": "application/json", "title": "STAC API / OGC API Features",
             "href": f"{base}{prefix.strip('/')}/"},
        ]
        if with_processes:
            links.append({"rel": "processes", "type": "application/json",
                          "title": "OGC API Processes", "href": f"{base}processes/"})
        return {"title": title, "links": links}

    @router.get("/healthz", summary="Liveness and database health")
    async def health(request: Request) -> JSONResponse:
        try:
            async with request.app.state.readpool.acquire() as conn:
                version = await conn.fetchval("SELECT pgstac.get_version()")
        except Exception as e:  # any database failure means "down", never a 500
            return JSONResponse({"status": "DOWN", "database": type(e).__name__},
                                status_code=503)
        return JSONResponse({"status": "UP", "pgstac": version})

    return router
