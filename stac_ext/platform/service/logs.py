"""Logs an operator can read: one line per expected event, tracebacks only for real
errors, and, with `LOG_FORMAT=json`, one JSON object per line carrying the request id.

The request id is the client's `X-Request-ID` when it is a plain token, else a new one;
it is echoed in the response's `X-Request-ID` and stamped on every log record made while
the request runs.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import secrets
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from stac_ext.platform.service.answer_headers import raw, value
from stac_ext.platform.service.http_middleware import HttpMiddleware

REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


class _NewIds:
    """New request ids: this process's random half and its count of requests (unique
    across processes and restarts without a system call each)."""

    def __init__(self) -> None:
        self.again()
        os.register_at_fork(after_in_child=self.again)  # a forked worker: its own half

    def again(self) -> None:
        self.process, self.count = secrets.token_hex(8), itertools.count()

    def __call__(self) -> str:
        return f"{self.process}{next(self.count):016x}"


new_request_id = _NewIds()


class RequestIdMiddleware(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        sent = (value(scope["headers"], b"x-request-id") or b"").decode("latin-1")
        request_id = sent if _CLIENT_ID.match(sent) else new_request_id()
        header = (b"x-request-id", request_id.encode("latin-1"))
        token = REQUEST_ID.set(request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw(message).append(header)
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            REQUEST_ID.reset(token)


class RequestIdFilter(logging.Filter):
    """Stamps records with the running request's id (None outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


#: Query parameters whose values are credentials (an authorization code is a signed JWT
#: with the user's groups and rights): never written to a log line.
SECRET_PARAMS = ("code", "state", "session_state", "token", "access_token", "id_token",
                 "refresh_token", "password", "client_secret", "api_key", "apikey", "secret")
_SECRET_VALUE = re.compile(r"([?&](?:" + "|".join(SECRET_PARAMS) + r")=)[^&\s#]*",
                           re.IGNORECASE)


class ScrubQuery(logging.Filter):
    """uvicorn's access lines carry the path with its query: credentials in it become ***."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_SECRET_VALUE.sub(r"\1***", arg) if isinstance(arg, str) else arg
                                for arg in record.args)
        return True


#: The exceptions (by module and class, this module imports no driver) that say the
#: database is away: unreachable, shutting down, a connection lost or none to be had.
OUTAGES = frozenset({
    "psycopg.OperationalError", "psycopg.InterfaceError",
    "asyncpg.exceptions.PostgresConnectionError",
    "asyncpg.exceptions.OperatorInterventionError",
    "asyncpg.exceptions._base.InterfaceError", "builtins.ConnectionError",
    "builtins.TimeoutError"})


def outage(error: BaseException | None) -> BaseException | None:
    """The error (or its cause, however wrapped: procrastinate's ConnectorException) that
    says the database is away; None when it is another error."""
    seen = 0
    while error is not None and seen < 10:
        if any(f"{kind.__module__}.{kind.__qualname__}" in OUTAGES
               for kind in type(error).__mro__):
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


class QuietOutages(logging.Filter):
    """The database being away is an expected event: every library logs it with its
    traceback (asyncpg's pool, psycopg's, procrastinate's worker, ours); one WARNING line
    says it all. libpq's words for a URL of several hosts take a line per host (and a
    hint): psycopg's pool logs them folded into one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and (found := outage(record.exc_info[1])) is not None:
            record.msg = f"{record.getMessage()} (the database is away: {type(found).__name__})"
            record.args = None
            record.exc_info = record.exc_text = None
            if record.levelno > logging.WARNING:
                record.levelno, record.levelname = logging.WARNING, "WARNING"
        elif record.name.startswith("psycopg") and "\n" in (said := record.getMessage()):
            record.msg = " ".join(line.strip() for line in said.splitlines() if line.strip()
                                  and not line.strip().startswith("Is the server running"))
            record.args = None
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage(),
        }
        if request_id := getattr(record, "request_id", None):
            entry["request_id"] = request_id
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def logging_config(log_format: str, level: str = "INFO") -> dict[str, Any]:
    """A `logging.config.dictConfig` (uvicorn applies it in every worker process)."""
    formatter = ({"()": f"{__name__}.JsonFormatter"} if log_format == "json" else
                 {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"})
    return {
        "version": 1, "disable_existing_loggers": False,
        "filters": {"request_id": {"()": f"{__name__}.RequestIdFilter"},
                    "scrub_query": {"()": f"{__name__}.ScrubQuery"},
                    "quiet_outages": {"()": f"{__name__}.QuietOutages"}},
        "formatters": {"default": formatter},
        "handlers": {"default": {"class": "logging.StreamHandler", "formatter": "default",
                                 "filters": ["request_id", "quiet_outages"]}},
        "root": {"handlers": ["default"], "level": level},
        "loggers": {"uvicorn": {"handlers": [], "propagate": True},
                    "uvicorn.error": {"handlers": [], "propagate": True},
                    "uvicorn.access": {"handlers": [], "propagate": True,
                                       "filters": ["scrub_query"]},
                    # its job lines say "Success" for failed and dismissed jobs too: the
                    # engine logs each job's end as it is (process_api.jobs.engine)
                    "procrastinate.worker": {"level": "WARNING"}},
    }
