"""A `bbox` across the antimeridian (west > east, as STAC writes it) finds what lies in the
band across 180°, and nothing of the band it is not: in a search (GET and POST), an items
page and an aggregation."""

from __future__ import annotations

import httpx

from tests.support.stac import make_collection, make_item, unique

#: item id: the west edge of its one-degree square
PLACES = {"fiji": 177.0, "samoa": -172.0, "guinea": 0.0, "hawaii": -156.0}
ACROSS = "170,-10,-170,10"  # 20° of longitude across 180°


async def _placed(admin_data: httpx.AsyncClient, collection: str) -> None:
    for item_id, west in PLACES.items():
        r = await admin_data.post(f"/data/collections/{collection}/items",
                                  json=make_item(item_id, x=west))
        assert r.status_code == 201, r.text


def _ids(page: dict) -> set[str]:
    return {feature["id"] for feature in page["features"]}


async def test_a_bbox_across_the_antimeridian_finds_the_band_across_it(
        admin_data: httpx.AsyncClient, collection: str) -> None:
    await _placed(admin_data, collection)
    across = {"fiji", "samoa"}
    r = await admin_data.get("/data/search", params={"collections": collection,
                                                      "bbox": ACROSS})
    assert (r.status_code, _ids(r.json()), r.json()["numberMatched"]) == (200, across, 2)
    r = await admin_data.post("/data/search", json={"collections": [collection],
                                                     "bbox": [170, -10, -170, 10]})
    assert (r.status_code, _ids(r.json())) == (200, across)
    r = await admin_data.post("/data/search", json={  # with heights
        "collections": [collection], "bbox": [170, -10, -100, -170, 10, 100]})
    assert (r.status_code, _ids(r.json())) == (200, across)
    r = await admin_data.get(f"/data/collections/{collection}/items", params={"bbox": ACROSS})
    assert (r.status_code, _ids(r.json())) == (200, across)
    r = await admin_data.get("/data/aggregate", params={
        "collections": collection, "bbox": ACROSS, "aggregations": "total_count"})
    assert (r.status_code, r.json()["aggregations"]) == (
        200, [{"name": "total_count", "data_type": "integer", "value": 2}])
    # the same box not across 180°: the band between, as before
    r = await admin_data.get("/data/search", params={"collections": collection,
                                                      "bbox": "-170,-10,170,10"})
    assert (r.status_code, _ids(r.json())) == (200, {"guinea", "hawaii"})


async def test_a_bbox_and_intersects_together_are_still_refused(
        admin_data: httpx.AsyncClient) -> None:
    r = await admin_data.post("/data/search", json={
        "bbox": [170, -10, -170, 10],
        "intersects": {"type": "Point", "coordinates": [175, 0]}})
    assert (r.status_code, r.json()) == (400, {
        "code": "InvalidRequest",
        "description": "body: intersects and bbox parameters are mutually "
                       "exclusive"})



async def test_a_collection_search_across_the_antimeridian(
        admin_data: httpx.AsyncClient) -> None:
    """Collections whose extent lies in the band across 180° (and one on it), not those of
    the band between."""
    extents = {"fiji": [176, -5, 179, -2], "samoa": [-173, -5, -171, -3],
               "across": [175, -5, -175, 5], "guinea": [-5, -5, 5, 5]}
    made = {}
    for name, extent in extents.items():
        body = make_collection(unique(f"test_conv-{name}_"))
        body["extent"]["spatial"]["bbox"] = [extent]
        assert (await admin_data.post("/data/collections", json=body)).status_code == 201
        item = make_item(f"{name}-item", x=extent[0])  # listed: it holds an item
        r = await admin_data.post(f"/data/collections/{body['id']}/items", json=item)
        assert r.status_code == 201, r.text
        made[body["id"]] = name
    ids = ", ".join(f"'{collection_id}'" for collection_id in made)
    r = await admin_data.get("/data/collections", params={
        "bbox": ACROSS, "filter-lang": "cql2-text", "filter": f"id IN ({ids})"})
    assert (r.status_code, {made[c["id"]] for c in r.json()["collections"]}) == (
        200, {"fiji", "samoa", "across"})
    r = await admin_data.get("/data/collections", params={  # not across 180°: as before
        "bbox": "-10,-10,10,10", "filter-lang": "cql2-text", "filter": f"id IN ({ids})"})
    assert (r.status_code, {made[c["id"]] for c in r.json()["collections"]}) == (
        200, {"guinea"})  # the extent across 180° is not the band between
