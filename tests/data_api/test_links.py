"""Every link is under the /data prefix, also behind a reverse proxy or a set BASE_URL."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.support.stac import make_item


def all_hrefs(doc: object) -> list[str]:
    """Every `links[].href` anywhere in a JSON document."""
    found: list[str] = []
    if isinstance(doc, dict):
        for link in doc.get("links", []) if isinstance(doc.get("links"), list) else []:
            found.append(link["href"])
        for key, value in doc.items():
            if key != "links":
                found += all_hrefs(value)
    elif isinstance(doc, list):
        for value in doc:
            found += all_hrefs(value)
    return found


async def crawl(client: httpx.AsyncClient, collection: str) -> list[str]:
    paths = ["/data/", "/data/collections", f"/data/collections/{collection}",
             f"/data/collections/{collection}/items?limit=1",
             f"/data/collections/{collection}/items/a",
             "/data/search?limit=1", "/data/conformance"]
    hrefs: list[str] = []
    for path in paths:
        r = await client.get(path)
        assert r.status_code == 200, (path, r.text)
        hrefs += all_hrefs(r.json())
    r = await client.post("/data/search", json={"collections": [collection], "limit": 1})
    hrefs += all_hrefs(r.json())
    return hrefs


async def seed(client: httpx.AsyncClient, collection: str) -> None:
    for name in ("a", "b"):
        r = await client.post(f"/data/collections/{collection}/items", json=make_item(name))
        assert r.status_code == 201


async def test_every_link_carries_the_prefix(alice_data: httpx.AsyncClient, collection: str):
    await seed(alice_data, collection)
    hrefs = await crawl(alice_data, collection)
    rels = set()
    for path in ("/data/", f"/data/collections/{collection}/items?limit=1"):
        rels |= {link["rel"] for link in (await alice_data.get(path)).json()["links"]}
    assert {"self", "root", "next", "collection", "parent"} <= rels
    assert hrefs
    internal = [h for h in hrefs if "testserver" in h]
    assert internal and all(h.startswith("http://testserver/data/") for h in internal), hrefs


async def test_links_follow_forwarded_headers(alice_data: httpx.AsyncClient, collection: str):
    await seed(alice_data, collection)
    alice_data.headers.update({"X-Forwarded-Proto": "https", "X-Forwarded-Host": "geo.example.org"})
    hrefs = await crawl(alice_data, collection)
    internal = [h for h in hrefs if "geo.example.org" in h or "testserver" in h]
    assert internal and all(h.startswith("https://geo.example.org/data/") for h in internal)


@pytest.fixture
async def base_url_client(service_app) -> AsyncIterator[httpx.AsyncClient]:
    async with service_app(base_url="https://public.example/catalog") as service:
        yield service.client(base_url="http://internal:9")


async def test_links_follow_configured_base_url(
    alice_data: httpx.AsyncClient, base_url_client: httpx.AsyncClient, collection: str
) -> None:
    await seed(alice_data, collection)
    hrefs = await crawl(base_url_client, collection)
    assert not [h for h in hrefs if "internal" in h]
    internal = [h for h in hrefs if "public.example" in h]
    assert internal and all(h.startswith("https://public.example/catalog/data/")
                            for h in internal), hrefs


@pytest.mark.parametrize("item_id", ["p%41q", "a b%c é", "x..y", "..", "."])
async def test_an_items_self_link_leads_to_it(alice_data: httpx.AsyncClient, collection: str,
                                              item_id: str) -> None:
    """Whatever its id holds (a space, `%`, a letter beyond ASCII, dots only): the item's
    `self` href, from the item, its page and a search, answers that item."""
    r = await alice_data.post(f"/data/collections/{collection}/items", json=make_item(item_id))
    assert r.status_code == 201, r.text
    item = (await alice_data.get(r.headers["location"])).json()
    page = (await alice_data.get(f"/data/collections/{collection}/items")).json()
    found = (await alice_data.post("/data/search", json={"collections": [collection]})).json()
    for doc in (item, *page["features"], *found["features"]):
        [self_href] = [link["href"] for link in doc["links"] if link["rel"] == "self"]
        followed = await alice_data.get(self_href)
        assert (followed.status_code, followed.json()["id"]) == (200, doc["id"]), self_href


async def test_a_pages_self_link_is_the_page_asked(alice_data: httpx.AsyncClient,
                                                   collection: str) -> None:
    """A GET page's `self` is that page, its parameters kept (stock's named the unfiltered
    first page); a POST search's is the search's address, its parameters in the body."""
    await seed(alice_data, collection)
    asked = [f"/data/collections/{collection}/items?limit=1&bbox=-180,-90,180,90",
             f"/data/search?collections={collection}&limit=1&sortby=-datetime"]
    for path in asked:
        page = (await alice_data.get(path)).json()
        selves = [link["href"] for link in page["links"] if link["rel"] == "self"]
        assert selves == [f"http://testserver{path}"]
        again = (await alice_data.get(selves[0])).json()
        assert [f["id"] for f in again["features"]] == [f["id"] for f in page["features"]]
    posted = (await alice_data.post("/data/search", json={"limit": 1})).json()
    assert [link["href"] for link in posted["links"] if link["rel"] == "self"] == [
        "http://testserver/data/search"]
