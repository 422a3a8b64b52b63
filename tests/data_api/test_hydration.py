"""Items served whole: merged with their collection's base item (`item_assets`) in the API,
as stock's Rust hydrater merges them, do-not-merge markers honoured and never served."""

from __future__ import annotations

import copy
import random
from typing import Any

import httpx
import psycopg
import pytest
from hydraters import hydrate
from pypgstac.hydration import DO_NOT_MERGE_MARKER, hydrate_py

from stac_ext.data_api.item_reads import hydrated
from stac_ext.settings import Settings
from tests.support.stac import make_collection, make_item, random_tree, unique


def test_the_python_merge_is_the_rust_one_without_markers() -> None:
    """The read path's merge (pypgstac's Python one) against stock's Rust hydrater with
    `strip_unmatched_markers`, on 5,000 random base items and items without markers
    (nested objects, equal and unequal lists, scalars over objects and back)."""
    rng = random.Random(7)
    compared = refused = 0
    for _ in range(5000):
        base, item = random_tree(rng), random_tree(rng)
        if rng.random() < 0.5:  # an item shaped like its base
            item = {**copy.deepcopy(base), **item}
        merged = hydrate_py(copy.deepcopy(base), copy.deepcopy(item))
        try:
            expected = hydrate(copy.deepcopy(base), copy.deepcopy(item),
                               strip_unmatched_markers=True)
        except ValueError:  # Rust refuses a list over a non-list: stock answers 500
            refused += 1
            continue
        assert merged == expected, (base, item)
        compared += 1
    assert compared > 2500 and refused > 0


def test_a_list_over_a_value_of_another_type_is_the_items() -> None:
    """Where the Rust hydrater raises (a 500 in stock), the item's own value is served."""
    assert hydrate_py({"roles": "data", "type": "x"}, {"roles": ["data"]}) == {
        "roles": ["data"], "type": "x"}


async def test_markers_are_honoured_and_never_served(
        admin_data: httpx.AsyncClient, alice_data: httpx.AsyncClient) -> None:
    """An item lacking fields of its collection's `item_assets` is stored with pgstac's
    do-not-merge markers: served without those fields (no marker) on every read path (item,
    items page, search), also after the collection has changed (pgstac keeps the base
    item the item was stored against)."""
    collection_id = unique("test_conv-var_")
    collection = {**make_collection(collection_id), "item_assets": {
        "data": {"type": "image/tiff", "roles": ["data"], "title": "the data"}}}
    assert (await admin_data.post("/data/collections", json=collection)).status_code == 201
    item = make_item(unique("marked-"), collection_id)
    item["assets"] = {"data": {"href": "https://example.org/a.tif", "type": "image/tiff"}}
    items_url = f"/data/collections/{collection_id}/items"
    assert (await alice_data.post(items_url, json=item)).status_code == 201

    async def served() -> list[dict[str, Any]]:
        single = (await alice_data.get(f"{items_url}/{item['id']}")).json()
        page = (await alice_data.get(items_url)).json()["features"]
        found = (await alice_data.post("/data/search", json={
            "collections": [collection_id]})).json()["features"]
        return [single, *page, *found]

    expected = {"href": "https://example.org/a.tif", "type": "image/tiff"}
    for body in await served():  # `roles` and `title` not merged in
        assert (body["id"], body["assets"]) == (item["id"], {"data": expected})
        assert DO_NOT_MERGE_MARKER not in str(body)
    del collection["item_assets"]
    r = await admin_data.put(f"/data/collections/{collection_id}", json=collection)
    assert r.status_code == 200, r.text
    for body in await served():
        assert (body["id"], body["assets"]) == (item["id"], {"data": expected})
        assert DO_NOT_MERGE_MARKER not in str(body)


async def test_a_stored_item_is_pgstacs_nonhydrated_item(
        database_url: str, admin_data: httpx.AsyncClient, alice_data: httpx.AsyncClient) -> None:
    """The single item's read (`geocatalog.stored_item`) answers pgstac's
    `content_nonhydrated` byte for byte, with the base item pgstac finds: items stored
    before the collection's first edit (untagged), after it (tagged), a tag naming no base
    item, a tag that is no number; a private item only for its owner and an admin."""
    collection_id = unique("test_conv-stored_")
    collection = {**make_collection(collection_id), "item_assets": {
        "data": {"type": "image/tiff", "roles": ["data"]}}}
    assert (await admin_data.post("/data/collections", json=collection)).status_code == 201
    items_url = f"/data/collections/{collection_id}/items"
    for n in range(2):
        doc = make_item(f"before-{n}", collection_id)
        doc["assets"] = {"data": {"href": f"https://example.org/{n}.tif"}}
        if n:
            doc["properties"]["visibility"] = "private"
        assert (await alice_data.post(items_url, json=doc)).status_code == 201
    collection["item_assets"]["data"]["title"] = "the data"
    r = await admin_data.put(f"/data/collections/{collection_id}", json=collection)
    assert r.status_code == 200, r.text
    for name in ("after", "bad-tag", "text-tag"):
        doc = make_item(name, collection_id)
        doc["assets"] = {"data": {"href": f"https://example.org/{name}.tif"}}
        assert (await alice_data.post(items_url, json=doc)).status_code == 201
    admin, alice, anyone = '{"all": true}', '{"user": "alice", "groups": []}', "{}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")  # pgstac's function needs it
        for name, tag in (("bad-tag", "99999999"), ("text-tag", "x")):
            conn.execute("UPDATE pgstac.items SET content = content || jsonb_build_object("
                         "'pgstac:base_item', %s::text) WHERE collection = %s AND id = %s",
                         (tag, collection_id, name))
        rows = conn.execute(
            "SELECT i.id, i.content->>'pgstac:base_item', pgstac.content_nonhydrated(i)::text, "
            "       geocatalog.stored_item(i.collection, i.id, %s::jsonb), "
            "       geocatalog.stored_item(i.collection, i.id, %s::jsonb), "
            "       geocatalog.stored_item(i.collection, i.id, %s::jsonb) "
            "FROM pgstac.items i WHERE i.collection = %s ORDER BY i.id",
            (admin, alice, anyone, collection_id)).fetchall()
        missing = conn.execute("SELECT geocatalog.stored_item(%s, 'nothing', %s::jsonb)",
                               (collection_id, admin)).fetchone()[0]
    tags = {row[0]: row[1] for row in rows}
    assert tags["before-0"] is None and tags["after"] is not None and tags["after"].isdigit()
    for item_id, _, expected, as_admin, as_alice, as_anyone in rows:
        assert (as_admin, as_alice) == (expected, expected), item_id
        assert as_anyone == (None if item_id == "before-1" else expected), item_id
    assert missing is None


def test_markers_that_match_nothing_are_dropped(settings: Settings) -> None:
    """A marker under a key its base item lacks (stock's `EXCLUDE_HYDRATE_MARKERS`): the
    read path's hydration, told the page holds markers, drops it."""
    stored = {"id": "a", "assets": {"data": {"href": "h", "roles": DO_NOT_MERGE_MARKER}},
              "pgstac:base_item": {"type": "Feature", "assets": None}}
    with pytest.warns(UserWarning, match=r"Stripped DO_NOT_MERGE_MARKER from: \$\.assets"):
        found = hydrated(stored, settings.exclude_hydrate_markers, markers=True)
    assert found == {"id": "a", "type": "Feature", "assets": {"data": {"href": "h"}}}
