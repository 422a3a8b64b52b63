"""Item ownership: the server sets the owner; only owner or admin change an item."""

from __future__ import annotations

import httpx

from tests.support.stac import make_item


async def test_owner_and_times_are_set_by_the_server(alice_data: httpx.AsyncClient, collection):
    item = make_item("owned")
    item["properties"]["owner"] = "somebody-else"
    item["properties"]["created"] = "1999-01-01T00:00:00Z"
    r = await alice_data.post(f"/data/collections/{collection}/items", json=item)
    assert r.status_code == 201, r.text
    assert r.json()["properties"]["owner"] == "alice"
    stored = (await alice_data.get(r.headers["Location"])).json()["properties"]
    assert stored["owner"] == "alice"
    assert stored["created"] != "1999-01-01T00:00:00Z"
    assert stored["created"] == stored["updated"]


async def test_only_owner_or_admin_changes_an_item(
    alice_data: httpx.AsyncClient, bob_data: httpx.AsyncClient, admin_data: httpx.AsyncClient,
    collection
) -> None:
    url = f"/data/collections/{collection}/items"
    created = (await alice_data.post(url, json=make_item("mine"))).json()["properties"]

    changed = make_item("mine")
    changed["properties"]["title"] = "bob was here"
    assert (await bob_data.put(f"{url}/mine", json=changed)).status_code == 403
    r = await bob_data.patch(f"{url}/mine", json={"properties": {"title": "x"}})
    assert r.status_code == 403
    assert (await bob_data.delete(f"{url}/mine")).status_code == 403
    stored = (await alice_data.get(f"{url}/mine")).json()
    assert "title" not in stored["properties"]

    changed["properties"]["title"] = "by alice"
    changed["properties"]["owner"] = "bob"  # not taken: the owner stays
    r = await alice_data.put(f"{url}/mine", json=changed)
    assert r.status_code == 200, r.text
    stored = (await alice_data.get(f"{url}/mine")).json()["properties"]
    assert stored["title"] == "by alice"
    assert stored["owner"] == "alice"
    assert stored["created"] == created["created"]
    assert stored["updated"] > created["updated"]

    r = await admin_data.patch(f"{url}/mine", json={"properties": {"title": "moderated"}})
    assert r.status_code == 200, r.text
    stored = (await alice_data.get(f"{url}/mine")).json()["properties"]
    assert stored["title"] == "moderated" and stored["owner"] == "alice"

    assert (await alice_data.delete(f"{url}/mine")).status_code == 204


async def test_writes_of_a_missing_item_are_404(alice_data: httpx.AsyncClient, collection):
    url = f"/data/collections/{collection}/items/none"
    assert (await alice_data.put(url, json=make_item("none"))).status_code == 404
    assert (await alice_data.patch(url, json={"properties": {"a": 1}})).status_code == 404
    assert (await alice_data.delete(url)).status_code == 404


async def test_bulk_items_follow_the_same_rules(
    anon: httpx.AsyncClient, alice_data: httpx.AsyncClient, bob_data: httpx.AsyncClient, collection
) -> None:
    url = f"/data/collections/{collection}/bulk_items"
    body = {"items": {f"b{n}": make_item(f"b{n}", x=n) for n in range(3)}, "method": "insert"}
    body["items"]["b0"]["properties"]["owner"] = "mallory"
    assert (await anon.post(url, json=body)).status_code == 401
    r = await alice_data.post(url, json=body)
    assert r.status_code == 200, r.text
    page = (await alice_data.get(f"/data/collections/{collection}/items")).json()
    assert {f["properties"]["owner"] for f in page["features"]} == {"alice"}

    upsert = {"items": {"b1": make_item("b1", x=50), "b9": make_item("b9")},
              "method": "upsert"}
    r = await bob_data.post(url, json=upsert)
    assert r.status_code == 200, r.text
    assert [e["id"] for e in r.json()["errors"]] == ["b1"]
    b1 = (await alice_data.get(f"/data/collections/{collection}/items/b1")).json()
    assert b1["bbox"][0] == 1 and b1["properties"]["owner"] == "alice"
    b9 = (await alice_data.get(f"/data/collections/{collection}/items/b9")).json()
    assert b9["properties"]["owner"] == "bob"
