"""GET /data/collections lists only collections that hold at least one item."""

import httpx

from tests.support.stac import make_collection, make_item, unique


async def listed_ids(client: httpx.AsyncClient) -> set[str]:
    ids: set[str] = set()
    url: str | None = "/data/collections?limit=100"
    while url:
        page = (await client.get(url)).json()
        ids |= {c["id"] for c in page["collections"]}
        url = next((link["href"] for link in page["links"] if link["rel"] == "next"), None)
    return ids


async def test_empty_collection_is_not_listed(alice_data: httpx.AsyncClient, collection: str):
    assert (await alice_data.get(f"/data/collections/{collection}")).status_code == 200
    assert collection not in await listed_ids(alice_data)


async def test_collection_listed_once_it_has_an_item_and_gone_when_emptied(
    alice_data: httpx.AsyncClient, collection: str
) -> None:
    r = await alice_data.post(f"/data/collections/{collection}/items", json=make_item("only"))
    assert r.status_code == 201, r.text
    assert collection in await listed_ids(alice_data)

    r = await alice_data.delete(f"/data/collections/{collection}/items/only")
    assert r.status_code == 204
    assert collection not in await listed_ids(alice_data)


async def test_collections_page_with_next_links_and_counts(
    alice_data: httpx.AsyncClient, admin_data: httpx.AsyncClient
) -> None:
    made = set()
    for _ in range(3):
        cid = unique("test_conv-paged_")
        r = await admin_data.post("/data/collections", json=make_collection(cid))
        assert r.status_code == 201
        assert (await alice_data.post(f"/data/collections/{cid}/items",
                                  json=make_item("i"))).status_code == 201
        made.add(cid)
    first = (await alice_data.get("/data/collections?limit=1")).json()
    assert first["numberReturned"] == 1
    assert first["numberMatched"] >= 3
    seen, url, pages = [], "/data/collections?limit=1", 0
    while url:
        page = (await alice_data.get(url)).json()
        seen += [c["id"] for c in page["collections"]]
        url = next((link["href"] for link in page["links"] if link["rel"] == "next"), None)
        pages += 1
    assert len(seen) == len(set(seen)) == first["numberMatched"] == pages
    assert made <= set(seen)


async def test_queryables_name_what_filters_read(anon: httpx.AsyncClient, collection: str
                                                 ) -> None:
    """/queryables listed datetime, geometry, id and owner only: STAC Browser, which builds
    its filters from it, offered the owner alone, though filters read any property."""
    r = await anon.get("/data/queryables")
    assert r.status_code == 200, r.text
    named = r.json()["properties"]
    assert sorted(named) == ["created", "datetime", "description", "geometry", "id", "owner",
                             "title", "updated"]
    assert (named["title"], named["description"]) == (
        {"type": "string", "title": "Title", "description": "A human-readable title of the item"},
        {"type": "string", "title": "Description",
         "description": "A detailed description of the item"})
    assert sorted((await anon.get(f"/data/collections/{collection}/queryables")
                   ).json()["properties"]) == sorted(named)
    # linked from the landing page (stock links it for its filter extension's class name)
    links = (await anon.get("/data/")).json()["links"]
    assert [link["href"] for link in links
            if link["rel"] == "http://www.opengis.net/def/rel/ogc/1.0/queryables"] == [
        "http://testserver/data/queryables"]
