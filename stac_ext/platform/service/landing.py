"""The service root: a landing document linking both APIs, and the readiness check.

`/healthz` answers "can this service serve now?": the database answers and every schema is
at the version this code ships (pgstac's, ours, the job engine's), else 503 naming what is
missing. Stock's `/data/_mgmt/ping` (the data API process lives) and `/data/_mgmt/health`
(the data API reaches pgstac) keep their own meanings.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

#: Over a database connection: (pgstac's version, the schemas with migrations pending).
Readiness = Callable[[Any], Awaitable[tuple[str | None, list[str]]]]


def root_router(title: str, prefix: str, processes_prefix: str,
                readiness: Readiness) -> APIRouter:
    """`prefix`, `processes_prefix`: the APIs' mounts; `readiness`: the database's check,
    handed in by the composition root."""
    router = APIRouter(tags=["Service"])

    @router.get("/", summary="Service landing page")
    async def landing(request: Request) -> dict:
        base = str(request.base_url)
        return {"title": title, "links": [
            {"rel": "self", "type": "application/json", "href": base},
            {"rel": "data", "type": "application/json", "title": "STAC API / OGC API Features",
             "href": f"{base}{prefix.strip('/')}/"},
            {"rel": "processes", "type": "application/json", "title": "OGC API Processes",
             "href": f"{base}{processes_prefix.strip('/')}/"},
        ]}

    @router.get("/healthz", summary="Readiness: the database answers, every schema migrated")
    async def health(request: Request) -> JSONResponse:
        try:
            async with request.app.state.get_connection(request) as conn:
                version, pending = await readiness(conn)
        except Exception as e:  # any database failure means "down", never a 500
            return JSONResponse({"status": "DOWN", "database": type(e).__name__},
                                status_code=503)
        if pending:
            return JSONResponse({"status": "DOWN", "pgstac": version,
                                 "pending_migrations": pending}, status_code=503)
        return JSONResponse({"status": "UP", "pgstac": version})

    return router
