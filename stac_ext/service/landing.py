"""The service root: a landing document linking both APIs, and the readiness check.

`/healthz` answers "can this service serve now?": the database answers and every schema is
at the version this code expects (pgstac's, ours, the job engine's), else 503 naming what
is missing. Stock's `/data/_mgmt/ping` (the data API process lives) and
`/data/_mgmt/health` (the data API reaches pgstac) keep their own meanings.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

#: Applied version of each of our schemas, as `geocatalog migrate` records them.
APPLIED = """
SELECT pgstac.get_version() AS pgstac,
       coalesce((SELECT jsonb_object_agg(schema_name, version) FROM (
                     SELECT schema_name, max(version) AS version
                     FROM geocatalog.schema_migrations GROUP BY schema_name) v), '{}')::text
           AS schemas
"""


def root_router(title: str, prefix: str, expected: Mapping[str, int]) -> APIRouter:
    """`expected`: the latest migration of each schema this code ships."""
    router = APIRouter(tags=["Service"])

    @router.get("/", summary="Service landing page")
    async def landing(request: Request) -> dict:
        base = str(request.base_url)
        return {"title": title, "links": [
            {"rel": "self", "type": "application/json", "href": base},
            {"rel": "data", "type": "application/json", "title": "STAC API / OGC API Features",
             "href": f"{base}{prefix.strip('/')}/"},
            {"rel": "processes", "type": "application/json", "title": "OGC API Processes",
             "href": f"{base}processes/"},
        ]}

    @router.get("/healthz", summary="Readiness: the database answers, every schema migrated")
    async def health(request: Request) -> JSONResponse:
        try:
            async with request.app.state.readpool.acquire() as conn:
                row = await conn.fetchrow(APPLIED)
        except Exception as e:  # any database failure means "down", never a 500
            return JSONResponse({"status": "DOWN", "database": type(e).__name__},
                                status_code=503)
        applied = orjson.loads(row["schemas"])
        pending = sorted(schema for schema, version in expected.items()
                         if applied.get(schema, 0) < version)
        if pending:
            return JSONResponse({"status": "DOWN", "pgstac": row["pgstac"],
                                 "pending_migrations": pending}, status_code=503)
        return JSONResponse({"status": "UP", "pgstac": row["pgstac"]})

    return router
