"""Slow is not down: a statement cancelled by its own time limit is a 504 saying the query
took too long (logged with its route), and a request that finds every connection of the
pool in use is a 503 saying the service is busy; neither says the database is away."""

from __future__ import annotations

import asyncio
import logging

import psycopg

from stac_ext.app import create_app
from tests.support.http import http_client


async def test_a_query_over_its_limit_is_504(settings, database_url: str, caplog) -> None:
    app = create_app(settings.model_copy(update={"db_statement_timeout": 0.3}))
    caplog.set_level(logging.WARNING, logger="stac_ext.service.errors")
    async with app.router.lifespan_context(app), http_client(app) as client:
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


async def test_a_busy_pool_is_503_busy_not_unavailable(settings, database_url: str) -> None:
    app = create_app(settings.model_copy(update={
        "db_min_conn_size": 1, "db_max_conn_size": 1, "db_timeout": 0.5}))
    async with app.router.lifespan_context(app), http_client(app) as client:
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
