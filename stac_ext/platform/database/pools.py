"""The data API's connection pools, on stock stac-fastapi-pgstac's terms (`readpool`,
`writepool` and `get_connection` on the app state, its JSON codecs and error translation),
with bounded waits: while the database is away, a request gets its 503 within
`DB_TIMEOUT` seconds instead of waiting for asyncpg's minute-long connect timeout. A wait
for a connection while every one of the pool is in use is the service being busy
(`ServiceBusy`), not the database being away.

A pool's URL may list a cluster's members: each new connection tries them all at once and
keeps the first that is what the URL asks (`target_session_attrs`; `cluster_connect`). A
write is never sent over a connection whose server says it is read-only (a demoted or
fenced primary, a replica): the write pool then drops every connection it has and connects
anew, to whichever server is the primary now, or answers 503 (`DatabaseReadOnly`) while
none is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import asyncpg
from fastapi import FastAPI, Request
from stac_fastapi.pgstac.db import con_init, translate_pgstac_errors

from stac_ext.platform.database import cluster_connect
from stac_ext.platform.database.kept_connections import KeptConnections
from stac_ext.platform.database.settings import PoolSettings
from stac_ext.platform.service.errors import DatabaseReadOnly, ServiceBusy


async def _session_kept(conn: asyncpg.Connection) -> None:
    """A connection back in the pool keeps its session: the API sets no session state (no
    `SET`, `LISTEN`, temp tables or session advisory locks; its locks are transaction
    locks) and asyncpg rolls back an open transaction itself. asyncpg's default reset
    (`RESET ALL`, `UNLISTEN *`, ...) would cost a round trip per request."""


async def _pool(settings: PoolSettings, timeout: float) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        settings.dsn, min_size=settings.min_size, max_size=settings.max_size,
        max_queries=settings.max_queries,
        max_inactive_connection_lifetime=settings.max_inactive_lifetime,
        init=con_init, server_settings=settings.server_settings,
        timeout=timeout,  # each new connection's connect (its hosts tried at once)
        connect=cluster_connect.connect, reset=_session_kept,
    )


async def open_pools(app: FastAPI, settings: PoolSettings, timeout: float,
                     reader: PoolSettings | None = None) -> None:
    """What stock's `connect_to_db` sets up, with `timeout` on connects and acquires; reads
    on `reader` (e.g. a streaming replica) when given, as stock's reader/writer pools.
    Requests keep their connections between them (`KeptConnections`)."""
    app.state.readpool = await _pool(reader or settings, timeout)
    app.state.writepool = await _pool(settings, timeout)
    kept = app.state.kept_connections = {"r": KeptConnections(app.state.readpool),
                                         "w": KeptConnections(app.state.writepool)}

    @asynccontextmanager
    async def get_connection(request: Request, readwrite: Literal["r", "w"] = "r"
                             ) -> AsyncIterator[asyncpg.Connection]:
        keeper = kept[readwrite]
        taken = keeper.take()
        conn, uses = taken if taken is not None else (await _acquired(keeper, timeout), 0)
        if readwrite == "w" and read_only(conn):
            conn, uses = await _writable(keeper, conn, timeout), 0
        try:
            with translate_pgstac_errors():
                yield conn
        except BaseException:  # the pool resets it: a query to cancel, a transaction open
            await keeper.pool.release(conn)
            raise
        if not keeper.keep(conn, uses + 1):
            await keeper.pool.release(conn)

    app.state.get_connection = get_connection


async def _acquired(keeper: KeptConnections, timeout: float) -> asyncpg.Connection:
    """A connection out of the pool within `timeout`: ServiceBusy when every one is in use."""
    pool = keeper.pool
    keeper.waiting += 1
    try:
        return await pool.acquire(timeout=timeout)
    except TimeoutError:
        if pool.get_size() >= pool.get_max_size() and pool.get_idle_size() == 0:
            raise ServiceBusy() from None
        raise  # a connect that did not finish: the database is away
    finally:
        keeper.waiting -= 1


def read_only(conn: asyncpg.Connection) -> bool:
    """Whether the server of `conn` refuses writes, as it reported last (PostgreSQL sends
    both settings to every session whenever they change; no round trip)."""
    settings = conn.get_settings()
    return (getattr(settings, "in_hot_standby", "off") == "on"
            or getattr(settings, "default_transaction_read_only", "off") == "on")


async def _writable(keeper: KeptConnections, conn: asyncpg.Connection,
                    timeout: float) -> asyncpg.Connection:
    """A connection to a writable server instead of `conn`, whose server turned read-only:
    every connection of the pool is dropped (they went to the same server) and one is made
    anew, to the URL's primary; DatabaseReadOnly when it is read-only too."""
    keeper.drop()
    await keeper.pool.expire_connections()  # those in use are closed as they come back
    await keeper.pool.release(conn)
    conn = await _acquired(keeper, timeout)
    if read_only(conn):
        await keeper.pool.release(conn)
        raise DatabaseReadOnly()
    return conn


def pool_states(app: FastAPI) -> dict[str, dict[str, int]]:
    """The data API's pools (`reader`, `writer`; none before they open) as the metrics
    report them; a connection kept between requests is idle."""
    states = {}
    for name, readwrite in (("reader", "r"), ("writer", "w")):
        keeper = getattr(app.state, "kept_connections", {}).get(readwrite)
        if keeper is not None:
            pool = keeper.pool
            idle = pool.get_idle_size() + len(keeper)
            states[name] = {"in_use": pool.get_size() - idle, "idle": idle,
                            "max": pool.get_max_size(), "waiting": keeper.waiting}
    return states


async def close_pools(app: FastAPI) -> None:
    for keeper in getattr(app.state, "kept_connections", {}).values():
        await keeper.close()
    for name in ("readpool", "writepool"):
        if pool := getattr(app.state, name, None):
            await pool.close()
