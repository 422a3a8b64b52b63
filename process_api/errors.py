"""OGC API Processes exceptions: `{"type", "title", "status", "detail"}` for every error."""

from __future__ import annotations

import logging
from http import HTTPStatus

import psycopg
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from process_api.queue import UNREACHABLE

logger = logging.getLogger("geocatalog.processes")

OGC = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/"
#: Part 2's exceptions (deploy, replace, undeploy): OgcError names them by their whole URI.
OGC2 = "http://www.opengis.net/def/exceptions/ogcapi-processes-2/1.0/"
_BY_STATUS = {400: "invalid-input", 401: "unauthorized", 403: "forbidden", 404: "not-found",
              405: "method-not-allowed", 409: "conflict", 413: "payload-too-large",
              429: "too-many-jobs", 503: "unavailable"}


class OgcError(HTTPException):
    def __init__(self, status: int, name: str, detail: str,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(status_code=status, detail=detail, headers=headers)
        self.name = name


def no_such_process(process_id: str) -> OgcError:
    return OgcError(404, "no-such-process", f"There is no process {process_id!r}.")


def no_such_job(job_id: object) -> OgcError:
    return OgcError(404, "no-such-job", f"There is no job {job_id} of yours.")


def exception_body(status: int, detail: str, name: str | None = None) -> dict:
    """The OGC exception document for a status (named by status when no name is given)."""
    return _body(status, name or _BY_STATUS.get(status, "error"), detail)


def _body(status: int, name: str, detail: str) -> dict:
    return {"type": name if "://" in name else OGC + name,
            "title": HTTPStatus(status).phrase, "status": status, "detail": detail}


def add_error_handlers(app: FastAPI) -> None:
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        name = getattr(exc, "name", None) or _BY_STATUS.get(exc.status_code, "error")
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return JSONResponse(_body(exc.status_code, name, detail), status_code=exc.status_code,
                            headers=exc.headers)

    async def on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        where = [".".join(str(p) for p in e.get("loc", ())) + f": {e.get('msg')}"
                 for e in exc.errors()]
        return JSONResponse(_body(400, "invalid-input", "; ".join(where)), status_code=400)

    async def on_bad_value(request: Request, exc: Exception) -> JSONResponse:
        # e.g. a NUL character, which PostgreSQL text and jsonb cannot hold
        return JSONResponse(_body(400, "invalid-input", f"A value cannot be stored: {exc}"),
                            status_code=400)

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unexpected error on %s %s", request.method, request.url.path)
        return JSONResponse(_body(500, "error", "Internal error; it has been logged."),
                            status_code=500)

    async def on_unavailable(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(_body(503, "unavailable", "The database is unavailable; retry."),
                            status_code=503, headers={"Retry-After": "5"})

    # `type: ignore[arg-type]`: Starlette types handlers as taking `Exception`; these
    # take the subclass they are registered for.
    app.add_exception_handler(Exception, on_unexpected)
    app.add_exception_handler(psycopg.DataError, on_bad_value)
    # the database is away: the job store's pool, the engine's queue
    for unavailable in UNREACHABLE:
        app.add_exception_handler(unavailable, on_unavailable)
    app.add_exception_handler(StarletteHTTPException, on_http)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, on_validation)  # type: ignore[arg-type]
