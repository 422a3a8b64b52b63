"""pgstac's staging table of new items is emptied by the POSTs that fill it once it has
grown past `ITEM_STAGING_BYTES`, and never while another transaction writes to it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import psycopg
import pytest

from stac_ext.data_api.queries import ITEM_STAGING_BYTES
from tests.support.cluster import migrated_database
from tests.support.http import http_client
from tests.support.issuer import TestIssuer
from tests.support.stac import make_collection, make_item

COLLECTION = "test_conv-staging"
ELSEWHERE = "test_conv-staging-elsewhere"  # pgstac holds a collection's writers in turn
SIZE = "SELECT pg_relation_size('pgstac.items_staging')"


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    url = migrated_database(database_url, "staging_")
    with psycopg.connect(url, autocommit=True) as conn:
        for collection in (COLLECTION, ELSEWHERE):
            conn.execute("SELECT pgstac.create_collection(%s::jsonb)",
                         (json.dumps(make_collection(collection)),))
            # its partition made now: making one holds every writer until it commits
            conn.execute("SELECT pgstac.create_item(%s::jsonb)", (json.dumps(
                make_item("first", collection)),))
    return url


@pytest.fixture
async def alice(database_app, issuer: TestIssuer) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(database_app, issuer.token("alice")) as client:
        yield client


def _grow_staging(url: str, prefix: str) -> int:
    """Items written in SQL until pgstac's staging table holds more than the bound (of
    dead rows: pgstac deletes each statement's rows there); its size."""
    with psycopg.connect(url, autocommit=True) as conn:
        n = 0
        while (size := conn.execute(SIZE).fetchone()[0]) <= ITEM_STAGING_BYTES:  # type: ignore[index]
            conn.execute("SELECT pgstac.create_items(%s::jsonb)", (json.dumps(
                [make_item(f"{prefix}{n}-{k}", COLLECTION)
                 for k in range(500)]),))
            n += 1
        return size


async def test_a_post_empties_the_grown_staging_table(alice: httpx.AsyncClient,
                                                     database: str) -> None:
    assert _grow_staging(database, "grown") > ITEM_STAGING_BYTES
    r = await alice.post(f"/data/collections/{COLLECTION}/items", json=make_item("posted"))
    assert r.status_code == 201, r.text
    with psycopg.connect(database) as conn:
        assert conn.execute(SIZE).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM pgstac.items WHERE collection = %s "
                            "AND id = 'posted'", (COLLECTION,)).fetchone() == (1,)


async def test_a_table_another_transaction_writes_to_is_left_alone(
        alice: httpx.AsyncClient, database: str) -> None:
    """A write in flight (into another collection) holds the table: the POST is written
    and leaves it as it is (emptied by a later one); the other transaction's item is kept."""
    size = _grow_staging(database, "held")
    with psycopg.connect(database) as other:  # a transaction open on the staging table
        other.execute("SELECT pgstac.create_item(%s::jsonb)", (json.dumps(
            make_item("in-flight", ELSEWHERE)),))
        r = await alice.post(f"/data/collections/{COLLECTION}/items", json=make_item("beside"))
        assert r.status_code == 201, r.text
        with psycopg.connect(database) as conn:
            assert conn.execute(SIZE).fetchone()[0] >= size  # type: ignore[index]
        other.commit()
    r = await alice.post(f"/data/collections/{COLLECTION}/items", json=make_item("after"))
    assert r.status_code == 201, r.text
    with psycopg.connect(database) as conn:
        assert conn.execute(SIZE).fetchone() == (0,)
        assert conn.execute(
            "SELECT array_agg(collection || '/' || id ORDER BY id) FROM pgstac.items "
            "WHERE id IN ('in-flight', 'beside', 'after')").fetchone() == (
            [f"{COLLECTION}/after", f"{COLLECTION}/beside", f"{ELSEWHERE}/in-flight"],)
