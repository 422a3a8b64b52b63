"""Our own conformance classes resolve: each URI in `/data/conformance`, the landing page and
a catalog's `conformsTo` that is under the API's address answers a page saying what the
class promises."""

from __future__ import annotations

import httpx

API = "http://testserver/data/"


async def test_every_class_of_ours_resolves(anon: httpx.AsyncClient) -> None:
    classes = (await anon.get("/data/conformance")).json()["conformsTo"]
    ours = [c for c in classes if c.startswith(API)]
    assert ours == [f"{API}spec/catalogs-tree/v1.0", f"{API}spec/item-search-owner/v1.0",
                    f"{API}spec/proposals/v1.0", f"{API}spec/subscriptions/v1.0"]
    assert (await anon.get("/data/")).json()["conformsTo"] == classes
    for uri in ours:
        r = await anon.get(uri)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "<h1>" in r.text and "</p>" in r.text
    page = (await anon.get(ours[1])).text
    assert "<h1>item-search-owner v1.0</h1>" in page and "properties.owner" in page
    r = await anon.get("/data/spec/item-search-owner/v9")
    assert r.status_code == 404
    assert r.json() == {"code": "NotFoundError",
                        "description": "No conformance class spec/item-search-owner/v9 here."}


async def test_a_catalog_names_its_search_classes_at_this_address(
        alice_data: httpx.AsyncClient) -> None:
    r = await alice_data.post("/data/catalogs", json={
        "id": "spec-check", "type": "Catalog", "description": "classes"})
    assert r.status_code == 201, r.text
    classes = r.json()["conformsTo"]
    assert f"{API}spec/item-search-owner/v1.0" in classes
    assert not [c for c in classes if not c.startswith(("http://", "https://"))]
