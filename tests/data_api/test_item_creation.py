"""Items are written without pgstac's staging table (`geocatalog.create_items`,
`upsert_items`) and stored exactly as pgstac's own functions store them: the same rows
(dehydrated against the same base item, tagged alike after the collection's edit), the same
partitions with the same time constraints; an upsert leaves an unchanged item unwritten."""

from __future__ import annotations

import copy
import random
from collections.abc import AsyncIterator

import httpx
import psycopg
import pytest
from psycopg.types.json import Jsonb

from tests.support.cluster import migrated_database
from tests.support.http import http_client
from tests.support.issuer import TestIssuer
from tests.support.stac import make_collection, make_item, random_tree

POSTED = "test_conv-created"
TWIN = "test_conv-created-twin"  # the same items, written by pgstac's create_items
ITEM_ASSETS = {"data": {"type": "image/tiff", "roles": ["data"], "title": "the data"}}

ROWS = """
SELECT id, st_astext(geometry), datetime, end_datetime, content - 'pgstac:base_item',
       content ? 'pgstac:base_item', private
FROM pgstac.items WHERE collection = %s ORDER BY id
"""
PARTITIONS = """
SELECT partition_dtrange, constraint_dtrange, constraint_edtrange
FROM pgstac.partition_sys_meta WHERE collection = %s ORDER BY partition_dtrange
"""


def _collection(collection_id: str) -> dict:
    return make_collection(collection_id) | {"item_assets": copy.deepcopy(ITEM_ASSETS)}


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    url = migrated_database(database_url, "creation_")
    with psycopg.connect(url, autocommit=True) as conn:
        for collection in (POSTED, TWIN):
            conn.execute("SELECT pgstac.create_collection(%s)", (Jsonb(_collection(collection)),))
        conn.execute("UPDATE pgstac.collections SET partition_trunc = 'month' "
                     "WHERE id IN (%s, %s)", (POSTED, TWIN))
        conn.execute("TRUNCATE pgstac.items_staging")
    return url


@pytest.fixture
async def alice(database_app, issuer: TestIssuer) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(database_app, issuer.token("alice")) as client:
        yield client


def _item(item_id: str, x: float, when: str, end: str | None = None) -> dict:
    item = make_item(item_id, x=x)
    item["properties"] = {"datetime": when, "note": None, "nested": {"kept": 1, "gone": None}}
    if end:
        item["properties"].update(start_datetime=when, end_datetime=end)
    # as item_assets but for its title: stored with a marker (not to be merged in)
    item["assets"] = {"data": {"href": f"https://example.org/{item_id}.tif",
                               "type": "image/tiff", "roles": ["data"]}}
    return item


def _stored(conn: psycopg.Connection, ids: list[str]) -> list[dict]:
    """POSTED's items of `ids` as stored (the server's owner and times), by id."""
    row = conn.execute("SELECT jsonb_agg(content_hydrate(i) ORDER BY id) FROM items i "
                       "WHERE collection = %s AND id = ANY(%s)", (POSTED, ids)).fetchone()
    assert row is not None
    return row[0]


def _write_twin(conn: psycopg.Connection, ids: list[str], *, upsert: bool = False) -> None:
    """The POSTED items of `ids` into TWIN by pgstac's create_items, or its upsert_items."""
    function = "upsert_items" if upsert else "create_items"
    conn.execute(f"SELECT {function}(%s)", (Jsonb(
        [item | {"collection": TWIN} for item in _stored(conn, ids)]),))


async def test_posted_items_are_stored_as_pgstac_stores_them(alice: httpx.AsyncClient,
                                                             database: str) -> None:
    items_url = f"/data/collections/{POSTED}/items"
    first = [_item("a", 0, "2021-01-05T00:00:00Z"),
             _item("b", 2, "2021-01-20T00:00:00Z", "2021-02-10T00:00:00Z"),
             _item("c", 4, "2021-03-03T00:00:00Z")]
    r = await alice.post(items_url, json={"type": "FeatureCollection", "features": first})
    assert (r.status_code, r.json()) == (201, {"created": 3})
    with psycopg.connect(database, autocommit=True) as conn:
        assert conn.execute("SELECT pg_relation_size('pgstac.items_staging')").fetchone() == (0,)
        conn.execute("SET search_path TO pgstac, public")
        _write_twin(conn, ["a", "b", "c"])
        for collection in (POSTED, TWIN):  # a new base item: later items are tagged
            edited = _collection(collection)
            edited["item_assets"]["data"]["title"] = "the data, renamed"
            conn.execute("SELECT update_collection(%s)", (Jsonb(edited),))
    r = await alice.post(items_url, json=_item("d", 6, "2021-01-02T00:00:00Z"))  # widens
    assert r.status_code == 201, r.text

    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        _write_twin(conn, ["d"])
        posted = conn.execute(ROWS, (POSTED,)).fetchall()
        assert [(row[0], row[5]) for row in posted] == [
            ("a", False), ("b", False), ("c", False), ("d", True)]
        assert posted[0][4]["assets"] == {"data": {"href": "https://example.org/a.tif",
                                                   "title": "𒍟※"}}
        assert posted == conn.execute(ROWS, (TWIN,)).fetchall()
        partitions = conn.execute(PARTITIONS, (POSTED,)).fetchall()
        assert [(str(p[0].lower), str(p[1].lower), str(p[2].upper)) for p in partitions] == [
            ("2021-01-01 00:00:00+00:00", "2021-01-02 00:00:00+00:00",
             "2021-02-10 00:00:00+00:00"),
            ("2021-03-01 00:00:00+00:00", "2021-03-03 00:00:00+00:00",
             "2021-03-03 00:00:00+00:00")]
        assert partitions == conn.execute(PARTITIONS, (TWIN,)).fetchall()


async def test_upserted_items_are_stored_as_pgstac_upserts_them(alice: httpx.AsyncClient,
                                                               database: str) -> None:
    """A bulk upsert (a changed item, an unchanged one, a new one) against pgstac's
    `upsert_items` of the same items."""
    items_url = f"/data/collections/{POSTED}/items"
    r = await alice.post(items_url, json={"type": "FeatureCollection", "features": [
        _item("kept", 8, "2021-03-10T00:00:00Z"), _item("changed", 10, "2021-03-11T00:00:00Z")]})
    assert r.status_code == 201, r.text
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        _write_twin(conn, ["kept", "changed"])
        # as stored (owner, created): the bulk upsert keeps them
        upserted = {item["id"]: item for item in _stored(conn, ["kept", "changed"])}
    upserted["new"] = _item("new", 12, "2021-04-01T00:00:00Z") | {"collection": POSTED}
    upserted["changed"]["properties"]["platform"] = "beta"
    r = await alice.post(f"/data/collections/{POSTED}/bulk_items",
                         json={"items": upserted, "method": "upsert"})
    assert (r.status_code, r.json()["success"]) == (200, 3), r.text

    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        _write_twin(conn, ["kept", "changed", "new"], upsert=True)
        posted = conn.execute(ROWS, (POSTED,)).fetchall()
        assert [row[4]["properties"].get("platform") for row in posted
                if row[0] in ("changed", "kept")] == ["beta", None]
        assert posted == conn.execute(ROWS, (TWIN,)).fetchall()
        assert conn.execute(PARTITIONS, (POSTED,)).fetchall() == conn.execute(
            PARTITIONS, (TWIN,)).fetchall()

        # the same item again (the API stamps `updated`, SQL writers need not): unwritten
        version = "SELECT xmin::text FROM items WHERE collection = %s AND id = 'kept'"
        before = conn.execute(version, (POSTED,)).fetchone()
        conn.execute("SELECT geocatalog.upsert_items(%s)", (Jsonb(_stored(conn, ["kept"])),))
        assert conn.execute(version, (POSTED,)).fetchone() == before


def test_the_strip_is_pgstacs(database: str) -> None:
    """`geocatalog.strip_jsonb` answers pgstac's `strip_jsonb` on 5,000 random pairs of an
    item and a base item (nested objects, equal and unequal lists, nulls, scalars over
    objects and back), half of the items shaped like their base."""
    rng = random.Random(11)
    pairs = []
    for _ in range(5000):
        base, item = random_tree(rng), random_tree(rng)
        if rng.random() < 0.5:
            item = {**copy.deepcopy(base), **item}
        pairs.append([item, base])
    with psycopg.connect(database) as conn:
        differing = conn.execute(
            "SELECT jsonb_agg(p) FROM jsonb_array_elements(%s) AS p "
            "WHERE geocatalog.strip_jsonb(p->0, p->1) "
            "      IS DISTINCT FROM pgstac.strip_jsonb(p->0, p->1)",
            (Jsonb(pairs),)).fetchone()
        stripped = conn.execute(
            "SELECT count(*) FROM jsonb_array_elements(%s) AS p "
            "WHERE pgstac.strip_jsonb(p->0, p->1) IS DISTINCT FROM p->0",
            (Jsonb(pairs),)).fetchone()
    assert differing == (None,)
    assert stripped is not None and stripped[0] > 2500  # most pairs had something to strip
