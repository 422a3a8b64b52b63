"""A real uvicorn process and a STAC client that is not ours (pystac-client)."""

from __future__ import annotations

import httpx
from pystac_client import Client

from tests.support.stac import make_collection, make_item, unique


def test_pystac_client_pages_through_every_item_once(live_server: str, issuer) -> None:
    collection = unique("test_conv-paging_")
    token = issuer.token("root", rights=["manageCollections"])
    with httpx.Client(base_url=f"{live_server}/data",
                      headers={"Authorization": f"Bearer {token}"}) as http:
        assert http.post("/collections", json=make_collection(collection)).status_code == 201
        features = [make_item(f"p-{n:03d}", x=n % 170, day=1 + n % 28) for n in range(47)]
        r = http.post(f"/collections/{collection}/items",
                      json={"type": "FeatureCollection", "features": features})
        assert r.status_code == 201, r.text

    catalog = Client.open(f"{live_server}/data/")
    search = catalog.search(collections=[collection], limit=10)
    pages = list(search.pages())
    ids = [item.id for page in pages for item in page.items]
    assert len(pages) == 5  # more than 3 pages, followed by `next` links
    assert len(ids) == len(set(ids)) == 47
    assert search.matched() == 47

    listed = [c.id for c in catalog.get_collections()]
    assert collection in listed
    items = list(catalog.get_collection(collection).get_items())
    assert len({i.id for i in items}) == 47


def test_head_is_answered_wherever_get_is(live_server: str, issuer) -> None:
    """HEAD: GET's status and headers without its body, on every kind of page (FastAPI's
    routes answered it 405); a path that takes no GET still refuses it."""
    collection = unique("test_conv-head_")
    token = issuer.token("root", rights=["manageCollections"])
    with httpx.Client(base_url=live_server, headers={"Authorization": f"Bearer {token}"}) as http:
        assert http.post("/data/collections", json=make_collection(collection)).status_code \
            == 201
        r = http.post(f"/data/collections/{collection}/items", json=make_item("a b%c é"))
        assert r.status_code == 201, r.text
        for path in ("/", "/data/", "/data/collections", f"/data/collections/{collection}",
                     r.headers["location"], "/data/search?limit=1", "/data/api", "/healthz",
                     "/processes/", "/processes/processes", "/data/collections/nope"):
            got, head = http.get(path), http.head(path)
            assert (head.status_code, head.headers.get("content-type"), head.content) == (
                got.status_code, got.headers.get("content-type"), b""), path
        refused = http.head("/data/bulk-nothing")
        assert refused.status_code == 404
        posted_only = http.head(f"/data/collections/{collection}/bulk_items")
        assert (posted_only.status_code, posted_only.headers["allow"]) == (405, "OPTIONS, POST")
