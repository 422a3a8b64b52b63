"""Search behaviour stock stac-fastapi-pgstac lacks or gets wrong, found by the validators:
every Query operator, single-string id lists, GeoJSON media type with `fields`, unknown
query parameters on the features endpoints."""

from __future__ import annotations

import json

import httpx

from tests.conftest import make_item


async def _seed(client: httpx.AsyncClient, collection: str) -> None:
    for n, name in enumerate(["north_100%", "north_2", "south_3", "sou\\th"], start=1):
        item = make_item(f"q{n}", collection_id=collection, x=n)
        item["properties"]["station"] = name
        r = await client.post(f"/data/collections/{collection}/items", json=item)
        assert r.status_code == 201, r.text


async def _ids(client: httpx.AsyncClient, collection: str, query: dict) -> list[str]:
    get = await client.get("/data/search", params={"collections": collection,
                                                   "query": json.dumps(query)})
    post = await client.post("/data/search", json={"collections": [collection],
                                                   "query": query})
    assert get.status_code == post.status_code == 200, (get.text, post.text)
    got, posted = (sorted(f["id"] for f in r.json()["features"]) for r in (get, post))
    assert got == posted
    return got


async def test_every_query_operator(client: httpx.AsyncClient, collection: str) -> None:
    await _seed(client, collection)
    assert await _ids(client, collection, {"station": {"startsWith": "north"}}) == ["q1", "q2"]
    # wildcards and the escape character are literal text
    assert await _ids(client, collection, {"station": {"endsWith": "100%"}}) == ["q1"]
    assert await _ids(client, collection, {"station": {"contains": "_"}}) == ["q1", "q2", "q3"]
    assert await _ids(client, collection, {"station": {"contains": "u\\t"}}) == ["q4"]
    assert await _ids(client, collection, {"station": {"in": ["south_3", "north_2"]}}) \
        == ["q2", "q3"]
    assert await _ids(client, collection, {"station": {"startsWith": "south",
                                                       "neq": "south_3"}}) == []
    assert await _ids(client, collection, {"station": {"eq": "north_2"}}) == ["q2"]
    bad = await client.post("/data/search", json={"query": {"station": {"like": "x"}}})
    assert bad.status_code == 400


async def test_single_string_lists_and_geojson_with_fields(client, collection) -> None:
    await _seed(client, collection)
    r = await client.post("/data/search", json={"collections": collection, "ids": "q2"})
    assert r.status_code == 200 and [f["id"] for f in r.json()["features"]] == ["q2"]
    for answer in (await client.post("/data/search", json={
                       "collections": [collection], "fields": {"include": ["id"]}}),
                   await client.get(f"/data/collections/{collection}/items",
                                    params={"fields": "id"})):
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/geo+json"


async def test_unknown_query_parameters_on_features(client, collection) -> None:
    await _seed(client, collection)
    for url in (f"/data/collections/{collection}/items?ooga=booga",
                f"/data/collections/{collection}/items/q1?ooga=booga"):
        r = await client.get(url)
        assert r.status_code == 400 and "ooga" in r.json()["description"]
    ok = await client.get(f"/data/collections/{collection}/items",
                          params={"limit": 2, "bbox": "0,0,10,10", "sortby": "-datetime",
                                  "filter-lang": "cql2-text", "filter": "station = 'north_2'"})
    assert ok.status_code == 200 and [f["id"] for f in ok.json()["features"]] == ["q2"]
    # pystac-client repeats the collection as `collections`: tolerated
    again = await client.get(f"/data/collections/{collection}/items",
                             params={"collections": collection, "limit": 1})
    assert again.status_code == 200 and len(again.json()["features"]) == 1
