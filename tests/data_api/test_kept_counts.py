"""What is kept ahead of reads beside the search index: its counts (`geocatalog.item_counts`)
and its sample (`geocatalog.search_sample`). An aggregation of no criteria but collections
(the landing page's facets, a collection's) sums the counts instead of counting every item:
its answers are compared whole with the same aggregation read from the rows (a bbox around
the whole world: a criterion, so the rows are read), for every kind of caller and
collections, after random writes, deletes, visibility and time changes, bulk writes,
concurrent writes and summing of the counts. The sample is compared whole, column by
column, with the index's rows of tier 1 and up after the same writes."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
import pytest

from tests.support.cluster import migrated_database
from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT, TestIssuer
from tests.support.stac import make_collection, make_item

COLLECTIONS = ["test_cf-sea_surface_height", "test_cf-sea_ice_area", "test_cf-rainfall_rate"]
PROJECT = "ice-lab"
COUNTED = "total_count,collection_frequency,datetime_yearly_frequency"
WORLD = "-180,-90,180,90"  # every item's bbox is in it
#: users who write; `root` is an administrator, `anonymous` reads only
WRITERS = ("alice", "bob", "carol")
MEMBERS = ("alice", "carol")  # of PROJECT


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return migrated_database(database_url, "counts_")


@pytest.fixture
async def callers(database_app, issuer: TestIssuer
                  ) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    tokens = {"anonymous": None,
              "alice": issuer.token("alice", groups=[PROJECT]),
              "bob": issuer.token("bob"),
              "carol": issuer.token("carol", groups=[PROJECT]),
              "root": issuer.token("root", rights=[ADMIN_RIGHT])}
    clients = {name: http_client(database_app, token) for name, token in tokens.items()}
    for client in clients.values():
        await client.__aenter__()
    for collection in COLLECTIONS:
        r = await clients["root"].post("/data/collections", json=make_collection(collection))
        assert r.status_code in (201, 409), r.text
    yield clients
    for client in clients.values():
        await client.__aexit__(None, None, None)


def _item(rng: random.Random, item_id: str, writer: str) -> dict[str, Any]:
    item = make_item(item_id, x=rng.uniform(-170, 170))
    item["properties"]["datetime"] = (f"{rng.randint(2019, 2021)}-{rng.randint(1, 12):02d}-"
                                      f"{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z")
    shared = [{"visibility": "project", "project": PROJECT}] if writer in MEMBERS else []
    item["properties"].update(rng.choice(
        [{"visibility": "public"}, {"visibility": "private"}, {}, *shared]))
    return item


async def _aggregate(client: httpx.AsyncClient, collections: list[str] | None,
                     rows: bool) -> list[dict[str, Any]]:
    params = {"aggregations": COUNTED}
    if collections is not None:
        params["collections"] = ",".join(collections)
    if rows:
        params["bbox"] = WORLD
    r = await client.get("/data/aggregate", params=params)
    assert r.status_code == 200, r.text
    aggregations: list[dict[str, Any]] = r.json()["aggregations"]
    return aggregations


async def _every_answer_equals_the_rows(callers: dict[str, httpx.AsyncClient]) -> None:
    for name, client in callers.items():
        for collections in (None, COLLECTIONS[:1], COLLECTIONS[1:]):
            kept = await _aggregate(client, collections, rows=False)
            assert kept == await _aggregate(client, collections, rows=True), (name, collections)


def _sample_is_the_index_sampled(database: str) -> int:
    """The sample's rows (asserted equal to the index's of tier 1 and up)."""
    with psycopg.connect(database) as conn:
        kept, resampled = (conn.execute(
            f"SELECT coalesce(array_agg(to_jsonb(r) ORDER BY r.collection, r.id), '{{}}') "
            f"FROM ({query}) r").fetchone() for query in (
                "SELECT * FROM geocatalog.search_sample",
                "SELECT s.*, t.tier FROM geocatalog.search_items s, "
                "geocatalog.sample_tier(s.id, s.collection) t(tier) WHERE t.tier > 0"))
    assert kept is not None and resampled is not None
    assert kept == resampled
    return len(kept[0])


def _recount(database: str) -> int:
    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT count(*) FROM geocatalog.search_items WHERE collection "
                           "= ANY (%s)", (COLLECTIONS,)).fetchone()
    assert row is not None
    return int(row[0])


async def test_kept_counts_answer_as_the_rows_after_every_kind_of_write(
        callers: dict[str, httpx.AsyncClient], database: str) -> None:
    rng = random.Random(80)
    live: dict[str, tuple[str, str]] = {}  # item id: (collection, its writer)
    for round_ in range(6):
        for n in range(8):  # single items, each its own statement
            writer, collection = rng.choice(WRITERS), rng.choice(COLLECTIONS)
            item_id = f"k{round_}-{n}"
            r = await callers[writer].post(f"/data/collections/{collection}/items",
                                           json=_item(rng, item_id, writer))
            assert r.status_code == 201, r.text
            live[item_id] = (collection, writer)
        # several in one statement
        writer, collection = rng.choice(WRITERS), rng.choice(COLLECTIONS)
        batch = [_item(rng, f"b{round_}-{n}", writer) for n in range(5)]
        r = await callers[writer].post(f"/data/collections/{collection}/items",
                                       json={"type": "FeatureCollection", "features": batch})
        assert r.status_code == 201, r.text
        live.update({item["id"]: (collection, writer) for item in batch})
        # a visibility and a time changed, an item deleted
        item_id = rng.choice(sorted(live))
        collection, writer = live[item_id]
        changed = _item(rng, item_id, writer)
        r = await callers[writer].put(f"/data/collections/{collection}/items/{item_id}",
                                      json=changed)
        assert r.status_code == 200, r.text
        item_id = rng.choice(sorted(live))
        collection, writer = live.pop(item_id)
        r = await callers[writer].delete(f"/data/collections/{collection}/items/{item_id}")
        assert r.status_code == 204, r.text
        item_id = rng.choice(sorted(i for i, (_, w) in live.items() if w == "bob")
                             or sorted(live))
        with psycopg.connect(database, autocommit=True) as conn:
            # an operator's fix in SQL: pgstac's row updated in place (the index's row
            # too), perhaps sharing with the project an item of bob's, who is no member
            # but reads his own
            conn.execute(
                "UPDATE pgstac.items SET content = jsonb_set(content, '{properties}', "
                "content->'properties' || %s) WHERE collection = %s AND id = %s",
                (json.dumps([{"visibility": "project", "project": PROJECT},
                             {"visibility": "public"}, {"visibility": "private"}][round_ % 3]),
                 live[item_id][0], item_id))
            if round_ % 2:  # the deltas summed now and then, as writes do by chance
                conn.execute("SELECT geocatalog.compact_counts(%s)", (COLLECTIONS,))
        await _every_answer_equals_the_rows(callers)
        _sample_is_the_index_sampled(database)
    total = (await _aggregate(callers["root"], COLLECTIONS, rows=False))[0]
    assert total == {"name": "total_count", "data_type": "integer", "value": len(live)}
    assert _recount(database) == len(live)
    # a collection deleted with its items: none counted
    gone = "test_cf-sea_ice_thickness"
    r = await callers["root"].post("/data/collections", json=make_collection(gone))
    assert r.status_code == 201, r.text
    r = await callers["alice"].post(f"/data/collections/{gone}/items", json={
        "type": "FeatureCollection", "features": [_item(rng, f"g{n}", "alice")
                                                  for n in range(4)]})
    assert r.status_code == 201, r.text
    assert (await _aggregate(callers["root"], [gone], rows=False))[0]["value"] == 4
    r = await callers["root"].delete(f"/data/collections/{gone}", params={"_force": "true"})
    assert (r.status_code, r.json()) == (200, {"deleted collection": gone})
    everything = await _aggregate(callers["root"], None, rows=False)
    assert everything == await _aggregate(callers["root"], None, rows=True)
    assert gone not in {b["key"] for b in everything[1]["buckets"]}
    assert _sample_is_the_index_sampled(database) > 0  # the test's items left some sampled


async def test_concurrent_writes_and_sums_keep_counts_exact(
        callers: dict[str, httpx.AsyncClient], database: str) -> None:
    """Writers of one collection and year at once, each statement summing the deltas by
    chance: no write waits for another's count, none is lost."""
    rng = random.Random(81)
    collection = COLLECTIONS[0]

    async def write(writer: str, n: int) -> None:
        item = _item(rng, f"c-{writer}-{n}", writer)
        item["properties"]["datetime"] = "2020-06-15T00:00:00Z"
        r = await callers[writer].post(f"/data/collections/{collection}/items", json=item)
        assert r.status_code == 201, r.text

    def sums(times: int) -> None:
        with psycopg.connect(database, autocommit=True) as conn:
            for _ in range(times):
                conn.execute("SELECT geocatalog.compact_counts(%s)", ([collection],))

    before = _recount(database)
    summing = asyncio.create_task(asyncio.to_thread(sums, 20))
    await asyncio.gather(*(write(writer, n) for n in range(30) for writer in WRITERS))
    await summing
    assert _recount(database) == before + 90
    await _every_answer_equals_the_rows(callers)
    _sample_is_the_index_sampled(database)


async def test_the_answers_come_from_the_kept_counts(
        callers: dict[str, httpx.AsyncClient], database: str) -> None:
    """A count put beside the rows (never by a write) shows in the answer without
    criteria only: that answer is the kept counts'."""
    collection = COLLECTIONS[2]
    before = await _aggregate(callers["anonymous"], [collection], rows=False)
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("INSERT INTO geocatalog.item_counts (collection, year, n) "
                     "VALUES (%s, '1999-01-01Z', 1000)", (collection,))
        try:
            kept = await _aggregate(callers["anonymous"], [collection], rows=False)
            rows = await _aggregate(callers["anonymous"], [collection], rows=True)
        finally:
            conn.execute("DELETE FROM geocatalog.item_counts WHERE year = '1999-01-01Z'")
    assert rows == before
    assert kept[0]["value"] == before[0]["value"] + 1000
    assert {"key": "1999-01-01T00:00:00Z", "data_type": "frequency_distribution",
            "frequency": 1000} in kept[2]["buckets"]
    assert json.dumps(kept) != json.dumps(rows)
