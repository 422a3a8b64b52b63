"""Item writes: the minimal item (no links, no bbox) is accepted (201 + Location), DELETE
answers 204."""

import httpx

from stac_ext.data_api.bodies import geometry_bbox
from tests.support.stac import make_item


async def test_minimal_item_is_created_and_read_back(
    alice_data: httpx.AsyncClient, collection: str
) -> None:
    item = make_item("minimal-1")
    assert "links" not in item and "bbox" not in item
    r = await alice_data.post(f"/data/collections/{collection}/items", json=item)
    assert r.status_code == 201, r.text
    location = r.headers["Location"]
    assert location == f"http://testserver/data/collections/{collection}/items/minimal-1"
    created = r.json()
    assert created["bbox"] == [0, 0, 1, 1]
    assert created["collection"] == collection

    got = await alice_data.get(location)
    assert got.status_code == 200
    stored = got.json()
    assert stored["id"] == "minimal-1"
    assert stored["geometry"] == item["geometry"]
    assert stored["properties"]["datetime"] == "2021-01-01T00:00:00Z"
    assert stored["assets"]["data"]["href"] == item["assets"]["data"]["href"]
    assert stored["stac_version"]


async def test_duplicate_item_is_409(alice_data: httpx.AsyncClient, collection: str) -> None:
    url = f"/data/collections/{collection}/items"
    assert (await alice_data.post(url, json=make_item("dup"))).status_code == 201
    r = await alice_data.post(url, json=make_item("dup"))
    assert r.status_code == 409
    assert r.json()["code"]


async def test_delete_item_is_204_then_404(alice_data: httpx.AsyncClient, collection: str) -> None:
    url = f"/data/collections/{collection}/items"
    assert (await alice_data.post(url, json=make_item("gone"))).status_code == 201
    r = await alice_data.delete(f"{url}/gone")
    assert r.status_code == 204
    assert r.content == b""
    assert (await alice_data.get(f"{url}/gone")).status_code == 404


async def test_feature_collection_post_creates_all(
    alice_data: httpx.AsyncClient, collection: str
) -> None:
    body = {"type": "FeatureCollection",
            "features": [make_item(f"fc-{n}", x=n) for n in range(3)]}
    r = await alice_data.post(f"/data/collections/{collection}/items", json=body)
    assert r.status_code == 201, r.text
    page = (await alice_data.get(f"/data/collections/{collection}/items")).json()
    assert sorted(f["id"] for f in page["features"]) == ["fc-0", "fc-1", "fc-2"]


async def test_items_posted_to_a_missing_collection_are_404(
    alice_data: httpx.AsyncClient, admin_data: httpx.AsyncClient
) -> None:
    """One item or a FeatureCollection; the check is part of the write's statement."""
    url = "/data/collections/no-such-collection-w/items"
    one = make_item("orphan-1")
    many = {"type": "FeatureCollection", "features": [make_item("orphan-2")]}
    for body in (one, many):
        r = await alice_data.post(url, json=body)
        assert (r.status_code, r.json()) == (404, {
            "code": "NotFoundError",
            "description": "Collection no-such-collection-w does not exist."})
    # nothing was written anywhere: a search for the ids finds nothing
    found = (await admin_data.post("/data/search", json={
        "ids": ["orphan-1", "orphan-2"]})).json()
    assert found["features"] == []


# -- unit tests: the bbox a minimal item gets from its geometry --------------------------

def test_bbox_of_a_polygon_and_a_point() -> None:
    polygon = {"type": "Polygon", "coordinates": [[[0, 0], [2, 0], [2, 3], [0, 3], [0, 0]]]}
    assert geometry_bbox(polygon) == [0, 0, 2, 3]
    assert geometry_bbox({"type": "Point", "coordinates": [5.5, -1]}) == [5.5, -1, 5.5, -1]


def test_bbox_of_a_collection_spans_its_members_and_ignores_heights() -> None:
    geometry = {"type": "GeometryCollection", "geometries": [
        {"type": "Point", "coordinates": [-10, 5, 100]},
        {"type": "LineString", "coordinates": [[1, 1], [20, -7]]},
        {"type": "GeometryCollection", "geometries": []}]}
    assert geometry_bbox(geometry) == [-10, -7, 20, 5]


def test_no_bbox_without_positions() -> None:
    assert geometry_bbox(None) is None
    assert geometry_bbox({"type": "Polygon", "coordinates": []}) is None
    assert geometry_bbox({"type": "GeometryCollection", "geometries": []}) is None


async def test_one_item_reads_as_search_renders_it(alice_data: httpx.AsyncClient, anon,
                                                   collection: str) -> None:
    """GET of one item reads the row directly (no `search()`): the same document as the
    search path, which the benchmark compares with stock's."""
    item = make_item("direct-1", collection_id=collection)
    item["assets"] = {"data": {"href": "https://data.example/x.zarr",
                               "type": "application/vnd+zarr", "roles": ["data"]}}
    assert (await alice_data.post(f"/data/collections/{collection}/items",
                                  json=item)).status_code == 201
    one = (await anon.get(f"/data/collections/{collection}/items/direct-1")).json()
    found = (await anon.post("/data/search", json={"ids": ["direct-1"],
                                                    "collections": [collection]})).json()
    assert one == found["features"][0]
    assert one["assets"]["data"]["href"] == "https://data.example/x.zarr"


async def test_an_empty_feature_collection_creates_nothing(
        alice_data: httpx.AsyncClient, collection: str) -> None:
    empty = {"type": "FeatureCollection", "features": []}
    r = await alice_data.post(f"/data/collections/{collection}/items", json=empty)
    assert (r.status_code, r.json()) == (201, {"created": 0})
    r = await alice_data.post("/data/collections/no-such-collection-e/items", json=empty)
    assert (r.status_code, r.json()) == (404, {
        "code": "NotFoundError",
        "description": "Collection no-such-collection-e does not exist."})
