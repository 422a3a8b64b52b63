"""Connections kept between requests: reused while idle, back to asyncpg's pool whenever
the pool has to see them (a request waiting, a transaction open, closed, worn, unused)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest

from stac_ext.platform.database.kept_connections import KeptConnections
from stac_ext.platform.database.pools import pool_states


@pytest.fixture
async def pool(settings) -> AsyncIterator[asyncpg.Pool]:
    async with asyncpg.create_pool(settings.api_dsn, min_size=1, max_size=1) as pool:
        yield pool


async def test_an_idle_connection_serves_the_next_request(pool: asyncpg.Pool) -> None:
    keeper = KeptConnections(pool)
    assert keeper.take() is None
    conn = await pool.acquire()
    backend = await conn.fetchval("SELECT pg_backend_pid()")
    assert keeper.keep(conn, 1)
    assert len(keeper) == 1 and pool.get_idle_size() == 0
    taken = keeper.take()
    assert taken is not None and taken == (conn, 1)
    assert await conn.fetchval("SELECT pg_backend_pid()") == backend
    assert len(keeper) == 0
    await pool.release(conn)


async def test_a_connection_the_pool_must_see_goes_back(pool: asyncpg.Pool) -> None:
    keeper = KeptConnections(pool, uses=3)
    conn = await pool.acquire()
    assert not keeper.keep(conn, 3)  # worn: the pool's max_queries counts on it
    transaction = conn.transaction()
    await transaction.start()
    assert not keeper.keep(conn, 1)  # the pool rolls it back
    await pool.release(conn)
    assert pool.get_idle_size() == 1
    conn = await pool.acquire()
    assert not conn.is_in_transaction()
    conn.terminate()  # the pool has it back at once (as when the server ends it)
    assert not keeper.keep(conn, 1)
    assert pool.get_idle_size() == 0 and pool.get_size() == 0


async def test_kept_connections_dropped_go_back_to_the_pool(pool: asyncpg.Pool) -> None:
    """Their server turned read-only (a failover): the pool has them back at once."""
    keeper = KeptConnections(pool)
    conn = await pool.acquire()
    assert keeper.keep(conn, 1)
    keeper.drop()
    assert len(keeper) == 0 and keeper.take() is None
    await keeper.close()  # waits for the release under way
    assert pool.get_idle_size() == 1


async def test_a_kept_connection_closed_meanwhile_is_not_handed_out(pool) -> None:
    keeper = KeptConnections(pool)
    conn = await pool.acquire()
    assert keeper.keep(conn, 1)
    conn.terminate()  # as when the server or the network ends it
    assert keeper.take() is None
    async with pool.acquire() as fresh:  # the pool makes a new one
        assert await fresh.fetchval("SELECT 1") == 1


async def test_a_request_waiting_in_the_pool_gets_the_next_one_done(pool) -> None:
    keeper = KeptConnections(pool)
    conn = await pool.acquire()
    backend = await conn.fetchval("SELECT pg_backend_pid()")
    keeper.waiting += 1  # as `get_connection` counts a request waiting for one
    waiter = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0)
    assert not waiter.done()
    assert not keeper.keep(conn, 1)
    await pool.release(conn)
    keeper.waiting -= 1
    conn = await waiter
    assert await conn.fetchval("SELECT pg_backend_pid()") == backend
    await pool.release(conn)


async def test_unused_connections_go_back_to_the_pool(pool: asyncpg.Pool) -> None:
    keeper = KeptConnections(pool, idle_seconds=0.05)
    assert keeper.keep(await pool.acquire(), 1)
    await asyncio.sleep(0.01)
    assert len(keeper) == 1
    await asyncio.sleep(0.2)  # the loop's timers run in order: the sweep ran before
    assert len(keeper) == 0 and pool.get_idle_size() == 1


async def test_closing_gives_every_one_back(pool: asyncpg.Pool) -> None:
    keeper = KeptConnections(pool)
    assert keeper.keep(await pool.acquire(), 1)
    await keeper.close()
    assert len(keeper) == 0 and pool.get_idle_size() == 1
    conn = await pool.acquire()
    assert not keeper.keep(conn, 1)  # a request that ends while the service stops
    await pool.release(conn)
    await pool.close()  # nothing held out of it


async def test_the_api_reports_kept_connections_as_idle(app, anon: httpx.AsyncClient) -> None:
    assert (await anon.get("/data/collections")).status_code == 200
    reader = pool_states(app)["reader"]
    assert len(app.state.kept_connections["r"]) >= 1
    assert reader["in_use"] == 0 and reader["waiting"] == 0
    assert reader["idle"] == app.state.readpool.get_size()
