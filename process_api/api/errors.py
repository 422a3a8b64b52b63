"""OGC API Processes exceptions: `{"type", "title", "status", "detail"}` for every error,
answered by the service's table of answers (`stac_ext.platform.service.errors`) with the
job store's rows added."""

from __future__ import annotations

import logging

import psycopg
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse

from process_api.data.file_inputs import InputRefused
from process_api.jobs.queue import UNREACHABLE
from stac_ext.platform.service.errors import ANSWERS as SERVICE_ANSWERS
from stac_ext.platform.service.errors import (
    DATABASE_AWAY,
    Answer,
    exception_body,
    exception_detail,
)
from stac_ext.platform.service.errors import OGC as OGC  # the exception types, for callers
from stac_ext.platform.service.errors import add_error_handlers as add_answers

logger = logging.getLogger("geocatalog.processes")

#: Part 2's exceptions (deploy, replace, undeploy): OgcError names them by their whole URI.
OGC2 = "http://www.opengis.net/def/exceptions/ogcapi-processes-2/1.0/"


class OgcError(HTTPException):
    """An HTTP error with its OGC exception type (`name`: a type of OGC's, or a whole URI)."""

    def __init__(self, status: int, name: str, detail: str,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(status_code=status, detail=detail, headers=headers)
        self.name = name


def no_such_process(process_id: str) -> OgcError:
    return OgcError(404, "no-such-process", f"There is no process {process_id!r}.")


def no_such_job(job_id: object) -> OgcError:
    return OgcError(404, "no-such-job", f"There is no job {job_id} of yours.")


#: The service's answers, and the job store's own: psycopg's, procrastinate's.
ANSWERS: dict[type[Exception], Answer] = {
    **SERVICE_ANSWERS,
    InputRefused: Answer(None, exception_detail),
    # e.g. a NUL character, which PostgreSQL text and jsonb cannot hold
    psycopg.DataError: Answer(400, lambda request, exc: f"A value cannot be stored: {exc}"),
    # the database is away: the job store's pool, the engine's queue
    **{away: DATABASE_AWAY for away in UNREACHABLE},
}


def add_error_handlers(app: FastAPI) -> None:
    """Every answer OGC-shaped (the sub-app serves nothing else), a bug a logged 500."""

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unexpected error on %s %s", request.method, request.url.path)
        return JSONResponse(exception_body(500, "Internal error; it has been logged."),
                            status_code=500)

    app.add_exception_handler(Exception, on_unexpected)
    add_answers(app, "", ANSWERS)
