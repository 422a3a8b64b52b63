"""The item write rule in one place (`stac_ext.data_api.item_writers`), and every path that
writes items following it: an item of alice's, written over by bob through the API (single
and bulk) and by publish-dataset's writer, is refused on each; by an admin through the API
it is changed, keeping its owner."""

from __future__ import annotations

import asyncpg
import httpx
import pytest

from stac_ext.data_api.item_rules import ItemRules
from stac_ext.data_api.item_writers import ItemWriter, locked_items
from stac_ext.publish.writer import Writer
from tests.support.stac import make_item, unique


@pytest.mark.parametrize(("writer", "owner", "may"), [
    (ItemWriter("alice"), "alice", True),
    (ItemWriter("bob"), "alice", False),
    (ItemWriter("bob"), None, False),  # loaded without an owner: administrators' only
    (ItemWriter("root", admin=True), "alice", True),
    (ItemWriter("root", admin=True), None, True),
])
def test_who_may_change_a_stored_item(writer: ItemWriter, owner: str | None,
                                      may: bool) -> None:
    assert writer.may_change(owner) is may


def test_who_may_share_with_a_project() -> None:
    shared = {"visibility": "project", "project": "ocean-lab"}
    assert ItemWriter("alice", frozenset({"ocean-lab"})).sharing_problem(shared) is None
    assert ItemWriter("root", admin=True).sharing_problem(shared) is None
    assert ItemWriter("bob").sharing_problem(shared) == (
        "You are not a member of the project 'ocean-lab': only its members share items "
        "with it.")
    assert ItemWriter("bob").sharing_problem({"visibility": "private"}) is None


async def test_every_path_follows_the_rule(alice_data: httpx.AsyncClient,
                                           bob_data: httpx.AsyncClient,
                                           admin_data: httpx.AsyncClient, collection,
                                           database_url: str) -> None:
    item_id = unique("ruled")
    url = f"/data/collections/{collection}/items"
    assert (await alice_data.post(url, json=make_item(item_id))).status_code == 201
    changed = make_item(item_id)
    changed["properties"]["title"] = "bob's"

    # the API, one item
    r = await bob_data.put(f"{url}/{item_id}", json=changed)
    assert (r.status_code, r.json()["description"]) == (
        403, "Only its owner or an administrator may change this item.")
    # the API, in bulk
    r = await bob_data.post(f"/data/collections/{collection}/bulk_items",
                            json={"items": {item_id: changed}, "method": "upsert"})
    assert r.status_code == 200, r.text
    assert r.json()["errors"] == [
        {"id": item_id, "msg": "Only its owner or an administrator may change this item."}]
    # publish-dataset's writer, running as bob
    conn = await asyncpg.connect(database_url)
    try:
        outcome = await Writer(conn, "bob", False, ItemRules()).write(
            [(collection, changed)], catalog=None)
        assert outcome.skipped == [(item_id, "an item of another user has this id")]
        async with conn.transaction():  # the rule's view of the item: locked, its owner
            stored = await locked_items(conn, collection, [item_id, "nothing"])
        assert list(stored) == [item_id] and stored[item_id].owner == "alice"
    finally:
        await conn.close()
    assert "title" not in (await alice_data.get(f"{url}/{item_id}")).json()["properties"]

    # an administrator changes it; the owner stays
    r = await admin_data.post(f"/data/collections/{collection}/bulk_items",
                              json={"items": {item_id: changed}, "method": "upsert"})
    assert r.json()["errors"] == [] and r.json()["success"] == 1
    stored = (await alice_data.get(f"{url}/{item_id}")).json()["properties"]
    assert (stored["title"], stored["owner"]) == ("bob's", "alice")
