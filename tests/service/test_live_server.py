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
