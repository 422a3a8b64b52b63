"""Error responses of the data API: the STAC shape `{"code", "description"}`, right status.

Stock stac-fastapi answers FastAPI's own errors as `{"detail": ..., "body": ...}`; the body
echo could leak what a client sent, so we replace those handlers too.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import Any

import asyncpg
import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from stac_fastapi.types.errors import (
    ConflictError,
    DatabaseError,
    ForeignKeyError,
    InvalidQueryParameter,
    NotFoundError,
)
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from process_api import exception_body

logger = logging.getLogger(__name__)

#: Database failures that say "the input was bad" (pgstac raises on invalid searches).
_BAD_INPUT = (asyncpg.exceptions.DataError, asyncpg.exceptions.RaiseError,
              asyncpg.exceptions.SyntaxOrAccessError)
#: Failures of the database connection itself: the service is unavailable, not broken.
#: (OSError covers refused connects and TimeoutError: no connection within DB_TIMEOUT.)
_UNAVAILABLE = (OSError, asyncpg.exceptions.PostgresConnectionError,
                asyncpg.exceptions.InterfaceError, asyncpg.exceptions.InternalClientError,
                asyncpg.exceptions.CannotConnectNowError, asyncpg.exceptions.AdminShutdownError,
                asyncpg.exceptions.CrashShutdownError,
                asyncpg.exceptions.TooManyConnectionsError)
#: Stock's own errors, answered as stock does (its class name as `code`) but logged as the
#: expected events they are: one line, no traceback.
_STOCK = {NotFoundError: 404, ConflictError: 409, InvalidQueryParameter: 400}
#: What to say when stock raises one of them without a message (pgstac's unique violation).
_UNSAID = {404: "It does not exist.", 409: "An object with this id exists already.",
           400: "The request is not valid."}
#: asyncpg's refusal of a query argument (its text is Python's, e.g. timedelta's limits).
_ARGUMENT_REFUSED = "invalid input for query argument"
_OUT_OF_RANGE = "A date, duration or number in the request is out of the range this " \
    "service can store or compare."


class ServiceBusy(RuntimeError):
    """Every database connection of the pool stayed in use while a request waited for one:
    the service is busy (503 saying so), not the database away."""


def error_response(status: int, description: str, code: str | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    code = code or HTTPStatus(status).phrase.title().replace(" ", "").replace("-", "")
    return JSONResponse({"code": code, "description": description}, status_code=status,
                        headers=headers)


def api_error(path: str, ogc_prefix: str, status: int, description: str,
              code: str | None = None, headers: Mapping[str, str] | None = None
              ) -> JSONResponse:
    """The error in the shape of the API `path` belongs to: OGC's exception under the
    process API's mount (`ogc_prefix`), STAC's `{"code", "description"}` elsewhere."""
    if within(path, ogc_prefix):
        return JSONResponse(exception_body(status, description), status_code=status,
                            headers=headers)
    return error_response(status, description, code, dict(headers) if headers else None)


def describe_errors(errors: Sequence[Mapping[str, Any]], first_only: bool = False) -> str:
    """Validation errors (pydantic's or FastAPI's) as `where: what`, `; `-separated."""
    parts = []
    for err in errors[:1] if first_only else errors:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def add_error_handlers(app: FastAPI, ogc_prefix: str) -> None:
    """The root app's error bodies: STAC API's, OGC's under `ogc_prefix` (the process API's
    mount: a path it did not match)."""

    async def on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, describe_errors(exc.errors()), "InvalidRequest")

    async def on_http(request: Request, exc: HTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        # under the process API's mount: a path it did not match
        return api_error(request.url.path, ogc_prefix, exc.status_code, detail,
                         headers=exc.headers)

    async def on_bad_input(request: Request, exc: Exception) -> JSONResponse:
        said = (str(exc).splitlines() or ["The database refused the input."])[0]
        if "0x00" in said:  # PostgreSQL's words for a NUL character
            said = "Text may not contain NUL characters (\\u0000)."
        elif said.startswith(_ARGUMENT_REFUSED):  # the driver's, with Python's words
            said = _OUT_OF_RANGE
        return error_response(400, said, "InvalidQueryParameter")

    async def on_out_of_range(request: Request, exc: Exception) -> JSONResponse:
        # Python's date and duration arithmetic on a valid-looking value (a datetime at
        # year 9999 with a negative offset): the input's fault, in Python's words
        logger.info("%s %s: 400 %s", request.method, request.url.path, type(exc).__name__)
        return error_response(400, _OUT_OF_RANGE, "InvalidRequest")

    async def on_bad_json_parameter(request: Request, exc: Exception) -> JSONResponse:
        # stock clients decode `intersects` / `query` parameters themselves; bodies are
        # FastAPI's (RequestValidationError), the database's JSON is always valid
        return error_response(400, f"A parameter is not valid JSON: {exc}",
                              "InvalidQueryParameter")

    async def on_unavailable(request: Request, exc: Exception) -> JSONResponse:
        logger.warning("database unavailable: %s", type(exc).__name__)
        return error_response(503, "The database is unavailable; retry shortly.",
                              headers={"Retry-After": "5"})

    async def on_slow(request: Request, exc: Exception) -> JSONResponse:
        limit = request.app.state.settings.db_statement_timeout
        logger.warning("query cancelled after %g s (DB_STATEMENT_TIMEOUT): %s %s", limit,
                       request.method, request.url.path)
        return error_response(504, f"The request took longer than {limit:g} s, this "
                              "service's limit for one query: narrow it (fewer collections, a "
                              "smaller area or time range, a lower limit) and send it again.",
                              "QueryTimeout")

    async def on_short(request: Request, exc: Exception) -> JSONResponse:
        # out of shared memory: the cluster's lock table full (another client's searches
        # over thousands of partitions, at PostgreSQL's default max_locks_per_transaction)
        logger.warning("database short of resources: %s (%s %s)",
                       (str(exc).splitlines() or [type(exc).__name__])[0], request.method,
                       request.url.path)
        return error_response(503, "The database is short of memory for this request just "
                              "now (its lock table or memory is full); retry shortly.",
                              headers={"Retry-After": "5"})

    async def on_busy(request: Request, exc: Exception) -> JSONResponse:
        logger.warning("every database connection busy: %s %s", request.method,
                       request.url.path)
        return error_response(503, "Every database connection of this service is in use: "
                              "retry in a moment.", headers={"Retry-After": "1"})

    async def on_missing_reference(request: Request, exc: Exception) -> JSONResponse:
        return error_response(404, "The collection this refers to does not exist.")

    async def on_incomplete(request: Request, exc: Exception) -> JSONResponse:
        return error_response(400, "A required field is missing.")

    async def on_stock(request: Request, exc: Exception) -> JSONResponse:
        status = next(code for cls, code in _STOCK.items() if isinstance(exc, cls))
        logger.info("%s %s: %d %s: %s", request.method, request.url.path, status,
                    type(exc).__name__, exc)
        return error_response(status, str(exc) or _UNSAID[status], type(exc).__name__)

    # `type: ignore[arg-type]`: Starlette types handlers as taking `Exception`; these
    # take the subclass they are registered for.
    app.add_exception_handler(orjson.JSONDecodeError, on_bad_json_parameter)
    app.add_exception_handler(OverflowError, on_out_of_range)
    app.add_exception_handler(asyncpg.exceptions.QueryCanceledError, on_slow)
    app.add_exception_handler(ServiceBusy, on_busy)
    app.add_exception_handler(asyncpg.exceptions.InsufficientResourcesError, on_short)
    app.add_exception_handler(ForeignKeyError, on_missing_reference)
    app.add_exception_handler(DatabaseError, on_incomplete)
    app.add_exception_handler(RequestValidationError, on_validation)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, on_http)  # type: ignore[arg-type]
    for exc_type in _BAD_INPUT:
        app.add_exception_handler(exc_type, on_bad_input)
    for exc_type in _UNAVAILABLE:
        app.add_exception_handler(exc_type, on_unavailable)
    for exc_type in _STOCK:
        app.add_exception_handler(exc_type, on_stock)


def within(path: str, prefix: str) -> bool:
    """Whether a request path is under a mount point (`/processes`: OGC's error bodies)."""
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


class UnexpectedErrorMiddleware:
    """A request that fails unexpectedly gets a 500 with the API's error body, and its
    connection stays usable: Starlette's outermost error handler answers, then raises the
    error again, and uvicorn closed the connection (clients saw it reset). Logged once,
    with its traceback. Under `ogc_prefix` (the process API's mount), OGC's body."""

    def __init__(self, app: ASGIApp, ogc_prefix: str) -> None:
        self.app = app
        self.ogc_prefix = ogc_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:
            if started:  # answered already (the process API's own handler logged it)
                return
            logger.exception("unexpected error on %s %s", scope["method"], scope["path"])
            await api_error(scope["path"], self.ogc_prefix, 500,
                            "Internal error; it has been logged.")(scope, receive, send)
