"""Item writes: SPEC's minimal item is accepted (201 + Location), DELETE answers 204."""

import httpx

from tests.conftest import make_item


async def test_minimal_item_is_created_and_read_back(
    client: httpx.AsyncClient, collection: str
) -> None:
    item = make_item("minimal-1")
    assert "links" not in item and "bbox" not in item
    r = await client.post(f"/data/collections/{collection}/items", json=item)
    assert r.status_code == 201, r.text
    location = r.headers["Location"]
    assert location == f"http://testserver/data/collections/{collection}/items/minimal-1"
    created = r.json()
    assert created["bbox"] == [0, 0, 1, 1]
    assert created["collection"] == collection

    got = await client.get(location)
    assert got.status_code == 200
    stored = got.json()
    assert stored["id"] == "minimal-1"
    assert stored["geometry"] == item["geometry"]
    assert stored["properties"]["datetime"] == "2021-01-01T00:00:00Z"
    assert stored["assets"]["data"]["href"] == item["assets"]["data"]["href"]
    assert stored["stac_version"]


async def test_duplicate_item_is_409(client: httpx.AsyncClient, collection: str) -> None:
    url = f"/data/collections/{collection}/items"
    assert (await client.post(url, json=make_item("dup"))).status_code == 201
    r = await client.post(url, json=make_item("dup"))
    assert r.status_code == 409
    assert r.json()["code"]


async def test_delete_item_is_204_then_404(client: httpx.AsyncClient, collection: str) -> None:
    url = f"/data/collections/{collection}/items"
    assert (await client.post(url, json=make_item("gone"))).status_code == 201
    r = await client.delete(f"{url}/gone")
    assert r.status_code == 204
    assert r.content == b""
    assert (await client.get(f"{url}/gone")).status_code == 404


async def test_feature_collection_post_creates_all(
    client: httpx.AsyncClient, collection: str
) -> None:
    body = {"type": "FeatureCollection",
            "features": [make_item(f"fc-{n}", x=n) for n in range(3)]}
    r = await client.post(f"/data/collections/{collection}/items", json=body)
    assert r.status_code == 201, r.text
    page = (await client.get(f"/data/collections/{collection}/items")).json()
    assert sorted(f["id"] for f in page["features"]) == ["fc-0", "fc-1", "fc-2"]
