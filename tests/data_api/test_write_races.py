"""One user can never take over another's new item: the ownership check and the write of
an item id are one atomic step for every writer (single POST, bulk upsert, publishing).

Forced interleavings: the test holds the id's lock (as a writer between its check and its
write does) while the other writers start; they wait, and whichever writes first owns the
item while the other is told so. Then the same race run freely, many times.
"""

from __future__ import annotations

import asyncio

import asyncpg
import httpx
import psycopg

from stac_ext.data_api import queries
from stac_ext.data_api.item_rules import ItemRules
from stac_ext.publish.writer import Writer
from tests.support.stac import make_item, unique


def held_lock(database_url: str, collection: str, item_id: str) -> psycopg.Connection:
    """A transaction holding the id's lock, as a writer between check and write does."""
    conn = psycopg.connect(database_url)
    conn.execute(queries.LOCK_ITEM_IDS.replace("$1", "%s").replace("$2", "%s"),
                 (collection, [item_id]))
    return conn


async def owner_of(alice_data: httpx.AsyncClient, collection: str, item_id: str) -> str:
    r = await alice_data.get(f"/data/collections/{collection}/items/{item_id}")
    return r.json()["properties"]["owner"]


def bulk(item_id: str) -> dict:
    return {"method": "upsert", "items": {item_id: make_item(item_id)}}


async def test_single_post_and_bulk_upsert_take_turns(database_url: str, alice_data,
                                                      bob_data, collection: str) -> None:
    item_id = unique("contested-")
    lock = held_lock(database_url, collection, item_id)
    try:
        bobs = asyncio.create_task(bob_data.post(f"/data/collections/{collection}/items",
                                                 json=make_item(item_id)))
        alices = asyncio.create_task(alice_data.post(
            f"/data/collections/{collection}/bulk_items", json=bulk(item_id)))
        await asyncio.sleep(1)
        assert not bobs.done() and not alices.done()  # both wait for the id
    finally:
        lock.close()
    bob, alice = await bobs, (await alices).json()
    owner = await owner_of(alice_data, collection, item_id)
    if bob.status_code == 201:
        assert owner == "bob"
        assert (alice["success"], alice["errors"]) == (0, [
            {"id": item_id, "msg": "Only its owner or an administrator may change this item."}])
    else:
        assert (bob.status_code, owner, alice["success"]) == (409, "alice", 1)


async def test_publishing_and_a_post_take_turns(database_url: str, alice_data, bob_data,
                                                collection: str) -> None:
    item_id = unique("published-")
    item = {**make_item(item_id), "stac_version": "1.0.0", "bbox": [0, 0, 1, 1], "links": [],
            "properties": {"datetime": "2021-01-01T00:00:00Z", "title": "published"}}
    lock = held_lock(database_url, collection, item_id)
    conn = await asyncpg.connect(database_url)
    try:
        writer = Writer(conn, "alice", False, ItemRules())
        published = asyncio.create_task(writer.write([(collection, item)], None))
        bobs = asyncio.create_task(bob_data.post(f"/data/collections/{collection}/items",
                                                 json=make_item(item_id)))
        await asyncio.sleep(1)
        assert not published.done() and not bobs.done()
        lock.close()
        outcome, bob = await published, await bobs
    finally:
        lock.close()
        await conn.close()
    owner = await owner_of(alice_data, collection, item_id)
    if bob.status_code == 201:
        assert owner == "bob"
        assert outcome.skipped == [(item_id, "an item of another user has this id")]
    else:
        assert (bob.status_code, owner, outcome.created) == (409, "alice",
                                                            [(collection, item_id)])


async def test_the_race_run_freely(alice_data, bob_data, collection: str) -> None:
    """The drill's reproduction: bob POSTs X while alice bulk-upserts X, 30 times."""
    for n in range(30):
        item_id = f"free-{n}"
        bob, alice = await asyncio.gather(
            bob_data.post(f"/data/collections/{collection}/items", json=make_item(item_id)),
            alice_data.post(f"/data/collections/{collection}/bulk_items", json=bulk(item_id)))
        owner = await owner_of(alice_data, collection, item_id)
        told = (bob.status_code, alice.json()["success"])
        assert told == ((201, 0) if owner == "bob" else (409, 1)), (n, told, owner)
