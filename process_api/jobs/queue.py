"""procrastinate's side of the job engine: its connections (a pool in autocommit), its
schema, what says the database is away, and the one line an aborted job's log says."""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

import procrastinate
import psycopg
import psycopg_pool
from psycopg_pool import AsyncConnectionPool

ENGINE_SCHEMA = "procrastinate"
#: What the job store's and the queue's connections raise while the database is away.
UNREACHABLE = (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout,
               procrastinate.exceptions.ConnectorException, OSError)


def queue_pool(dsn: str, timeout: float, max_size: int = 4) -> AsyncConnectionPool:
    """procrastinate's connections, as its own pool makes them (checked when taken, so a
    restarted database is noticed) but in autocommit: each of its queries is one statement,
    so a defer is not wrapped in BEGIN / COMMIT round trips."""
    return AsyncConnectionPool(
        dsn, min_size=1, max_size=max_size, open=False, timeout=timeout,
        kwargs={"options": f"-c search_path={ENGINE_SCHEMA}",
                "connect_timeout": connect_timeout(timeout)},
        configure=autocommit, check=AsyncConnectionPool.check_connection)


async def autocommit(conn: psycopg.AsyncConnection) -> None:
    # not a connection keyword: procrastinate's listener adds `autocommit` to the pool's
    await conn.set_autocommit(True)


def connect_timeout(timeout: float) -> int:
    """libpq's connect_timeout: whole seconds, at least 2 (it treats 1 as 2)."""
    return max(2, math.ceil(timeout))


class QuietAborts(logging.Filter):
    """An aborted job (a worker shutting down) is an expected event: procrastinate logs it
    with the CancelledError's traceback; one line says it all."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError
                                          | procrastinate.exceptions.JobAborted):
            record.exc_info = record.exc_text = None
        return True


QUIET_ABORTS = QuietAborts()


def install_engine_schema(conn: Any) -> tuple[str, bool]:
    """Create procrastinate's tables in their own schema, once (a psycopg connection):
    (what the schema is, whether this call created it)."""
    what = f"{ENGINE_SCHEMA}: procrastinate {procrastinate.__version__} schema"
    exists = conn.execute("SELECT to_regclass(%s)", (f"{ENGINE_SCHEMA}.procrastinate_jobs",))
    if exists.fetchone()[0] is not None:
        return what, False
    with conn.transaction():
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {ENGINE_SCHEMA}")
        conn.execute(f"SET LOCAL search_path TO {ENGINE_SCHEMA}")
        conn.execute(procrastinate.schema.SchemaManager.get_schema())
    return what, True
