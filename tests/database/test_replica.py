"""Reads on a replica: with DATABASE_READER_URL the data API reads from a PostgreSQL
streaming replica of the test cluster (`pg_basebackup -R`, another port) and writes to the
primary; writes are refused nowhere and show on the replica once replicated."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from stac_ext.platform.database import roles
from stac_ext.platform.database.cluster import Cluster
from tests.support.cluster import migrated_cluster
from tests.support.http import free_port
from tests.support.stac import make_collection, make_item, unique


@pytest.fixture(scope="module")
def primary_and_replica() -> Iterator[tuple[Cluster, Cluster]]:
    with migrated_cluster("geocatalog-replica-") as primary:
        replica = primary.start_replica(primary.datadir.parent / "replica", free_port())
        try:
            yield primary, replica
        finally:
            replica.stop()


async def _eventually(get, seconds: float = 30):
    """Poll until the answer is 200 (bounded; not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while True:
        r = await get()
        if r.status_code == 200 or time.monotonic() > deadline:
            return r
        await asyncio.sleep(0.1)


@pytest.mark.slow
async def test_reads_go_to_the_replica_and_writes_to_the_primary(
        settings, service_app, issuer, primary_and_replica: tuple[Cluster, Cluster]) -> None:
    primary, replica = primary_and_replica
    admin = issuer.token("root", rights=[settings.admin_right])
    async with service_app(database=primary.dsn,
                           database_reader_url=replica.role_dsn(roles.API)) as service:
        app, c = service.app, service.client(admin)
        async with app.state.readpool.acquire() as conn:
            assert await conn.fetchval("SELECT pg_is_in_recovery()") is True
            assert await conn.fetchval("SELECT current_user") == roles.API
        async with app.state.writepool.acquire() as conn:
            assert await conn.fetchval("SELECT pg_is_in_recovery()") is False
        collection = unique("test_conv-replicated_")
        r = await c.post("/data/collections", json=make_collection(collection))
        assert r.status_code == 201, r.text
        # a write right after: it checks the collection on the primary, not the replica
        r = await c.post(f"/data/collections/{collection}/items", json=make_item("first"))
        assert r.status_code == 201, r.text
        r = await _eventually(lambda: c.get(f"/data/collections/{collection}/items/first"))
        assert (r.status_code, r.json()["id"]) == (200, "first")
        # every read of the data API works on a read-only replica (pgstac caches nothing)
        for path in ("/data/collections", f"/data/collections/{collection}",
                     f"/data/collections/{collection}/items",
                     f"/data/search?collections={collection}&limit=5",
                     "/data/search?owner=root&limit=1", "/data/catalogs", "/healthz"):
            assert (await c.get(path)).status_code == 200, path
        r = await c.post("/data/search", json={"collections": [collection]})
        assert [f["id"] for f in r.json()["features"]] == ["first"]
        assert r.json()["numberMatched"] == 1
        top = unique("replicated")
        r = await c.post("/data/catalogs", json={"id": top, "type": "Catalog",
                                                 "description": "on the primary"})
        assert r.status_code == 201, r.text
        r = await _eventually(lambda: c.get(f"/data/catalogs/{top}"))
        assert r.json()["description"] == "on the primary"
        r = await c.delete(f"/data/collections/{collection}/items/first")
        assert r.status_code == 204
