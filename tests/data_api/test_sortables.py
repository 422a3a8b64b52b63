"""Sortables: `/sortables` and `/collections/{id}/sortables` say what `sortby` takes (what
the search index keeps in order); any other field is a 400 naming them, on `/search` (GET
and POST) and items pages; pystac-client finds the Sort class it knows."""

from __future__ import annotations

import warnings

import httpx
from pystac_client import Client

SORTABLE = ["datetime", "id", "collection", "owner"]


async def test_sortables_documents(anon: httpx.AsyncClient, collection: str) -> None:
    r = await anon.get("/data/sortables")
    assert r.status_code == 200 and r.headers["content-type"] == "application/schema+json"
    doc = r.json()
    assert doc["$id"] == "http://testserver/data/sortables"
    assert list(doc["properties"]) == SORTABLE and doc["additionalProperties"] is False
    r = await anon.get(f"/data/collections/{collection}/sortables")
    assert r.status_code == 200 and list(r.json()["properties"]) == SORTABLE
    r = await anon.get("/data/collections/no-such-collection/sortables")
    assert r.status_code == 404
    assert r.json()["description"] == "Collection no-such-collection does not exist."
    classes = (await anon.get("/data/conformance")).json()["conformsTo"]
    for uri in ("https://api.stacspec.org/v1.1.0/item-search#sortables",
                "https://api.stacspec.org/v1.0.0/item-search#sort",
                "http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/sortables"):
        assert uri in classes


async def test_only_sortables_sort(anon: httpx.AsyncClient, collection: str) -> None:
    message = ("sortby: properties.rank is not sortable; sortable fields: datetime, id, "
               "collection, owner (see /sortables).")
    for r in (await anon.get("/data/search", params={"sortby": "-properties.rank"}),
              await anon.post("/data/search", json={
                  "sortby": [{"field": "properties.rank", "direction": "asc"}]}),
              await anon.get(f"/data/collections/{collection}/items",
                             params={"sortby": "properties.rank"})):
        assert r.status_code == 400, r.text
        assert r.json() == {"code": "InvalidQueryParameter", "description": message}
    for field in ("datetime", "properties.datetime", "id", "collection", "owner",
                  "properties.owner"):
        r = await anon.get("/data/search", params={"sortby": f"-{field}", "limit": 1})
        assert r.status_code == 200, (field, r.text)


def test_pystac_client_sees_sort(live_server: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "does not conform to SORT" was a warning
        search = Client.open(f"{live_server}/data/").search(
            sortby="-properties.datetime", max_items=3)
        assert len(list(search.items())) <= 3


async def test_the_landing_page_links_the_sortables(anon: httpx.AsyncClient) -> None:
    links = (await anon.get("/data/")).json()["links"]
    assert {"rel": "http://www.opengis.net/def/rel/ogc/1.0/sortables",
            "type": "application/schema+json", "href": "http://testserver/data/sortables",
            "title": "Sortables"} in links
