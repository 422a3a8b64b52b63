"""Error responses of both APIs, as a table: which exception gets which status, words and
headers (`ANSWERS`), and one handler that looks it up. The body's shape is chosen in one
place (`api_error`): OGC's exception `{"type", "title", "status", "detail"}` under the
process API's mount, STAC's `{"code", "description"}` elsewhere.

Stock stac-fastapi answers FastAPI's own errors as `{"detail": ..., "body": ...}`; the body
echo could leak what a client sent, so we replace those handlers too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import asyncpg
import orjson
import pydantic
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

from stac_ext.platform.service.client_gone import ClientGone
from stac_ext.platform.service.http_middleware import HttpMiddleware

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
#: asyncpg's refusal of a query argument (its text is Python's, e.g. timedelta's limits).
_ARGUMENT_REFUSED = "invalid input for query argument"
_OUT_OF_RANGE = "A date, duration or number in the request is out of the range this " \
    "service can store or compare."


#: OGC API Processes' exception types, by the status they answer.
OGC = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/"
_OGC_BY_STATUS = {400: "invalid-input", 401: "unauthorized", 403: "forbidden",
                  404: "not-found", 405: "method-not-allowed", 409: "conflict",
                  413: "payload-too-large", 429: "too-many-jobs", 503: "unavailable"}


class Forbidden(HTTPException):
    """403: the caller may not, and `detail` says why (the access table's words:
    `stac_ext.platform.access.require`). `name`: its OGC exception type under the process
    API (by status, `forbidden`, when None)."""

    def __init__(self, detail: str, name: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status_code=403, detail=detail, headers=headers)
        self.name = name


class ServiceBusy(RuntimeError):
    """Every database connection of the pool stayed in use while a request waited for one:
    the service is busy (503 saying so), not the database away."""


class DatabaseReadOnly(RuntimeError):
    """A write found only a read-only server (a replica, a demoted primary): the cluster has
    no primary just now (a failover), 503."""


def exception_body(status: int, detail: str, name: str | None = None) -> dict[str, Any]:
    """OGC's exception document; `name` is a type of OGC's (or a whole URI), by status when
    none is given."""
    name = name or _OGC_BY_STATUS.get(status, "error")
    return {"type": name if "://" in name else OGC + name,
            "title": HTTPStatus(status).phrase, "status": status, "detail": detail}


def error_response(status: int, description: str, code: str | None = None,
                   headers: Mapping[str, str] | None = None) -> JSONResponse:
    code = code or HTTPStatus(status).phrase.title().replace(" ", "").replace("-", "")
    return JSONResponse({"code": code, "description": description}, status_code=status,
                        headers=dict(headers) if headers else None)


def api_error(path: str, ogc_prefix: str, status: int, description: str,
              code: str | None = None, headers: Mapping[str, str] | None = None,
              ogc_name: str | None = None) -> JSONResponse:
    """The error in the shape of the API `path` belongs to: OGC's exception under the
    process API's mount (`ogc_prefix`), STAC's `{"code", "description"}` elsewhere."""
    if within(path, ogc_prefix):
        return JSONResponse(exception_body(status, description, ogc_name),
                            status_code=status, headers=dict(headers) if headers else None)
    return error_response(status, description, code, headers)


def describe_errors(errors: Sequence[Mapping[str, Any]], first_only: bool = False) -> str:
    """Validation errors (pydantic's or FastAPI's) as `where: what`, `; `-separated, each
    once: where as the input names it (not pydantic's names of the types it tried, such as
    `tuple[...]` for each shape a bbox may have), what without pydantic's "Value error, "
    before a validator's own words."""
    parts: list[str] = []
    for err in errors[:1] if first_only else errors:
        where = ".".join(str(p) for p in err.get("loc", ())
                         if p != "body" and not (isinstance(p, str) and "[" in p)) or "body"
        what = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if err.get("type") == "json_invalid":  # its location is the character's offset
            at = f", at character {where}" if where.isdigit() else ""
            where, what = "body", f"not valid JSON ({err.get('ctx', {}).get('error')}{at})"
        if (part := f"{where}: {what}") not in parts:
            parts.append(part)
    return "; ".join(parts) or "invalid request"


#: What an answer says: fixed words, or words made of the request and the exception.
Words = str | Callable[[Request, Exception], str]


@dataclass(frozen=True)
class Answer:
    """How one kind of failure is answered. `status` None: the exception's own (an
    HTTPException's). `log`: the one line it is logged with, if any, at `level`."""

    status: int | None
    says: Words
    code: str | None = None  # STAC's `code` (by status when None)
    headers: Mapping[str, str] = field(default_factory=dict)
    log: Callable[[Request, Exception, int], str] | None = None  # (request, exc, status)
    level: int = logging.WARNING


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _event(request: Request, exc: Exception, status: int) -> str:
    """An expected event's line: the request, its answer's status and what was raised."""
    return (f"{request.method} {request.url.path}: {status} {type(exc).__name__}: "
            f"{_first_line(exc)}")


def exception_detail(request: Request, exc: Exception) -> str:
    """What the exception says: its `detail` (an HTTPException's), else its text; a
    validation that failed (stock's GET searches and items pages put pydantic's whole
    report, with its links, in their 400's detail) in the words a body's would have."""
    if isinstance(exc.__cause__, pydantic.ValidationError):
        return describe_errors(exc.__cause__.errors())
    detail = getattr(exc, "detail", None)
    return detail if isinstance(detail, str) else str(detail if detail is not None else exc)


def _refused_input(request: Request, exc: Exception) -> str:
    said = (str(exc).splitlines() or ["The database refused the input."])[0]
    if "0x00" in said:  # PostgreSQL's words for a NUL character
        return "Text may not contain NUL characters (\\u0000)."
    if said.startswith(_ARGUMENT_REFUSED):  # the driver's, with Python's words
        return _OUT_OF_RANGE
    return said


def _too_slow(request: Request, exc: Exception) -> str:
    limit = request.app.state.settings.db_statement_timeout
    return (f"The request took longer than {limit:g} s, this service's limit for one query: "
            "narrow it (fewer collections, a smaller area or time range, a lower limit) and "
            "send it again.")


def _stock(unsaid: str) -> Words:
    # pgstac's unique violation comes without a message
    return lambda request, exc: str(exc) or unsaid


#: The one answer of both APIs while the database is away (its drivers' words for that
#: differ: each API's table maps its own to this).
DATABASE_AWAY = Answer(
    503, "The database is unavailable; retry shortly.", headers={"Retry-After": "5"},
    log=lambda request, exc, status: f"database unavailable: {type(exc).__name__}")

#: Every failure a request may meet that is not a bug, and its answer. Stock's own errors
#: keep stock's `code` (their class name) and are logged as the expected events they are:
#: one line, no traceback.
ANSWERS: dict[type[Exception], Answer] = {
    HTTPException: Answer(None, exception_detail),
    RequestValidationError: Answer(
        400, lambda request, exc: describe_errors(exc.errors()),  # type: ignore[attr-defined]
        "InvalidRequest"),
    # stock clients decode `intersects` / `query` parameters themselves; bodies are
    # FastAPI's (RequestValidationError), the database's JSON is always valid
    orjson.JSONDecodeError: Answer(
        400, lambda request, exc: f"A parameter is not valid JSON: {exc}",
        "InvalidQueryParameter"),
    # Python's date and duration arithmetic on a valid-looking value (a datetime at year
    # 9999 with a negative offset): the input's fault, in Python's words
    OverflowError: Answer(400, _OUT_OF_RANGE, "InvalidRequest", log=_event,
                          level=logging.INFO),
    **{refused: Answer(400, _refused_input, "InvalidQueryParameter") for refused in _BAD_INPUT},
    asyncpg.exceptions.QueryCanceledError: Answer(
        504, _too_slow, "QueryTimeout", log=lambda request, exc, status: (
            f"query cancelled after {request.app.state.settings.db_statement_timeout:g} s "
            f"(DB_STATEMENT_TIMEOUT): {request.method} {request.url.path}")),
    ServiceBusy: Answer(
        503, "Every database connection of this service is in use: retry in a moment.",
        headers={"Retry-After": "1"}, log=lambda request, exc, status: (
            f"every database connection busy: {request.method} {request.url.path}")),
    # out of shared memory: the cluster's lock table full (another client's searches over
    # thousands of partitions, at PostgreSQL's default max_locks_per_transaction)
    asyncpg.exceptions.InsufficientResourcesError: Answer(
        503, "The database is short of memory for this request just now (its lock table or "
        "memory is full); retry shortly.", headers={"Retry-After": "5"},
        log=lambda request, exc, status: "database short of resources: "
        f"{_first_line(exc)} ({request.method} {request.url.path})"),
    **{away: DATABASE_AWAY for away in _UNAVAILABLE},
    # a write on a server that has just become read-only, or with no primary to connect to:
    # a failover under way
    **{read_only: Answer(
        503, "The database accepts no writes just now (its primary is changing); retry "
        "shortly.", headers={"Retry-After": "5"},
        log=lambda request, exc, status: f"database read-only: {type(exc).__name__} "
        f"({request.method} {request.url.path})")
       for read_only in (DatabaseReadOnly, asyncpg.exceptions.ReadOnlySQLTransactionError)},
    ForeignKeyError: Answer(404, "The collection this refers to does not exist."),
    DatabaseError: Answer(400, "A required field is missing."),
    NotFoundError: Answer(404, _stock("It does not exist."), "NotFoundError", log=_event,
                          level=logging.INFO),
    ConflictError: Answer(409, _stock("An object with this id exists already."),
                          "ConflictError", log=_event, level=logging.INFO),
    InvalidQueryParameter: Answer(400, _stock("The request is not valid."),
                                  "InvalidQueryParameter", log=_event, level=logging.INFO),
    # nginx's status for it: the answer reaches nobody, the metrics count it
    ClientGone: Answer(499, exception_detail, "ClientClosedRequest", log=_event,
                       level=logging.INFO),
}


def answer_for(exc: Exception, answers: Mapping[type[Exception], Answer]) -> Answer | None:
    """The answer of the exception's nearest class in the table."""
    return next((answers[cls] for cls in type(exc).__mro__ if cls in answers), None)


def add_error_handlers(app: FastAPI, ogc_prefix: str,
                       answers: Mapping[type[Exception], Answer] = ANSWERS) -> None:
    """`app` answers every exception of `answers` as the table says, in the shape of the
    API the path belongs to (`ogc_prefix` "" or "/": every path is OGC's)."""

    async def on_error(request: Request, exc: Exception) -> JSONResponse:
        answer = answer_for(exc, answers)
        if answer is None:  # a handler is registered only for the table's classes
            raise exc
        status = answer.status if answer.status is not None else \
            int(getattr(exc, "status_code", 500))
        says = answer.says if isinstance(answer.says, str) else answer.says(request, exc)
        if answer.log is not None:
            logger.log(answer.level, "%s", answer.log(request, exc, status))
        headers = {**answer.headers, **(getattr(exc, "headers", None) or {})}
        return api_error(request.url.path, ogc_prefix, status, says, answer.code, headers,
                         getattr(exc, "name", None))

    for exc_type in answers:
        app.add_exception_handler(exc_type, on_error)


def within(path: str, prefix: str) -> bool:
    """Whether a request path is under a mount point (`/processes`: OGC's error bodies)."""
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


class UnexpectedErrorMiddleware(HttpMiddleware):
    """A request that fails unexpectedly gets a 500 with the API's error body, and its
    connection stays usable: Starlette's outermost error handler answers, then raises the
    error again, and uvicorn closed the connection (clients saw it reset). Logged once,
    with its traceback. Under `ogc_prefix` (the process API's mount), OGC's body."""

    def __init__(self, app: ASGIApp, ogc_prefix: str) -> None:
        super().__init__(app)
        self.ogc_prefix = ogc_prefix

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
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
