"""A search (or an aggregation) whose client leaves is cancelled in the database, and its
connection goes back to the pool: a real uvicorn process, a real lock holding the read in
PostgreSQL."""

from __future__ import annotations

import re
import socket
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest

from tests.support.jobs import until
from tests.support.stac import make_collection, make_item, unique


def _waiting_on_locks(database_url: str) -> int:
    """The service's statements waiting for a lock (the blocker's is granted)."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
                           "'Lock' AND datname = current_database()").fetchone()
    return row[0] if row else 0


def _answered_4xx(base: str, route: str) -> float:
    """The reads of `route` answered with a 4xx so far, as the service's metrics count
    them."""
    text = httpx.get(f"{base}/metrics").text
    found = re.search(rf'^geocatalog_http_requests_total\{{method="GET",route="{route}",'
                      r'status="4xx"\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


@pytest.mark.parametrize(("route", "field", "value"), [
    ("/data/search", "numberMatched", 1), ("/data/aggregate", "type", "AggregationCollection")])
async def test_a_read_whose_client_leaves_ends_in_the_database(
        live_server: str, issuer, database_url: str, route: str, field: str,
        value: object) -> None:
    collection = unique("gone-")
    token = issuer.token("root", rights=["manageCollections"])
    with httpx.Client(base_url=f"{live_server}/data",
                      headers={"Authorization": f"Bearer {token}"}) as http:
        assert http.post("/collections", json=make_collection(collection)).status_code == 201
        assert http.post(f"/collections/{collection}/items",
                         json=make_item("one", collection)).status_code == 201
    counted = _answered_4xx(live_server, route)
    url = urlsplit(live_server)
    with psycopg.connect(database_url) as blocker:
        # every read of the items or of their search index waits for this lock until the
        # blocker's transaction ends
        blocker.execute("LOCK TABLE pgstac.items, geocatalog.search_items "
                        "IN ACCESS EXCLUSIVE MODE")
        client = socket.create_connection((url.hostname, url.port))
        client.sendall(f"GET {route}?collections={collection} HTTP/1.1\r\n"
                       f"Host: {url.netloc}\r\n\r\n".encode())
        assert await until(lambda: _waiting_on_locks(database_url) == 1)
        client.close()  # the client gives up
        # the search's statement is cancelled while the lock is still held
        assert await until(lambda: _waiting_on_locks(database_url) == 0)
    assert await until(lambda: _answered_4xx(live_server, route) == counted + 1)
    # the connection went back to the pool: the same read is answered
    found = httpx.get(f"{live_server}{route}", params={"collections": collection})
    assert (found.status_code, found.json()[field]) == (200, value)
