"""Slow is not down: a statement cancelled by its own time limit is a 504 saying the query
took too long (logged with its route), and a request that finds every connection of the
pool in use is a 503 saying the service is busy; neither says the database is away."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import psycopg


async def test_a_query_over_its_limit_is_504(service_app, database_url: str, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="stac_ext.platform.service.errors")
    async with service_app(db_statement_timeout=0.3) as service:
        client = service.client()
        with psycopg.connect(database_url) as holder:  # the search waits for this lock
            holder.execute("LOCK TABLE geocatalog.search_items IN ACCESS EXCLUSIVE MODE")
            r = await client.get("/data/search", params={"limit": 1})
        assert (r.status_code, r.json()) == (504, {
            "code": "QueryTimeout",
            "description": "The request took longer than 0.3 s, this service's limit for one "
                           "query: narrow it (fewer collections, a smaller area or time "
                           "range, a lower limit) and send it again."})
        assert "retry-after" not in r.headers
        assert (await client.get("/data/search", params={"limit": 1})).status_code == 200
    assert "query cancelled after 0.3 s (DB_STATEMENT_TIMEOUT): GET /data/search" \
        in caplog.text


async def test_a_busy_pool_is_503_busy_not_unavailable(service_app, database_url: str) -> None:
    async with service_app(db_min_conn_size=1, db_max_conn_size=1, db_timeout=0.5) as service:
        client = service.client()
        with psycopg.connect(database_url) as holder:
            holder.execute("LOCK TABLE geocatalog.search_items IN ACCESS EXCLUSIVE MODE")
            waiting = asyncio.create_task(client.get("/data/search", params={"limit": 1}))
            await asyncio.sleep(0.2)  # it holds the pool's only connection
            r = await client.get("/data/collections")
            holder.rollback()
        assert (r.status_code, r.json(), r.headers["retry-after"]) == (503, {
            "code": "ServiceUnavailable",
            "description": "Every database connection of this service is in use: retry in "
                           "a moment."}, "1")
        assert (await waiting).status_code == 200


async def test_a_full_lock_table_is_503_retry(service_app, database_url: str, caplog) -> None:
    """Another client of the database that fills its lock table (stock's search over
    thousands of partitions, at PostgreSQL's defaults) leaves the API's queries "out of
    shared memory": a 503 to retry, not a 500."""
    caplog.set_level(logging.WARNING, logger="stac_ext.platform.service.errors")
    async with service_app() as service:
        client = service.client()
        assert (await client.get("/data/search", params={"limit": 1})).status_code == 200
        with psycopg.connect(database_url, autocommit=True) as holder:
            # session locks, kept after the statement fails for want of room
            with contextlib.suppress(psycopg.errors.OutOfMemory):
                holder.execute("SELECT pg_advisory_lock(n) FROM generate_series(1, 10000000) n")
            try:
                r = await client.get("/data/search", params={"limit": 1})
            finally:
                holder.execute("SELECT pg_advisory_unlock_all()")
        assert (r.status_code, r.json()) == (503, {
            "code": "ServiceUnavailable",
            "description": "The database is short of memory for this request just now (its "
                           "lock table or memory is full); retry shortly."}), r.text
        assert r.headers["retry-after"] == "5"
        assert (await client.get("/data/search", params={"limit": 1})).status_code == 200
    assert "database short of resources: out of shared memory (GET /data/search)" \
        in caplog.text
