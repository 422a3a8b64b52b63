"""ItemLinker builds the very links stock stac-fastapi-pgstac's ItemLinks builds."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from fastapi import FastAPI
from stac_fastapi.pgstac.models.links import ItemLinks
from stac_fastapi.types.requests import get_base_url
from starlette.requests import Request

from stac_ext.data_api.item_links import ItemLinker
from stac_ext.data_api.urls import _ROOTS, item_path, request_root

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit

IDS = ["plain-1", "under_score", "a b", "x.y", "..", ".", "a/b", "a/../b", "é-ü", "q?x=1",
       "h#frag", "p%20q", "c:d", "semi;colon", "//double"]
STORED = [
    {"rel": "license", "href": "../LICENSE", "type": "text/plain"},
    {"rel": "self", "href": "http://elsewhere/self"},  # inferred: replaced
    {"rel": "alternate", "href": "http://other.example/x.html", "title": "x"},
    {"rel": "derived_from", "href": "collections/c/items/other"},
]


def _request(prefix: str) -> Request:
    app = FastAPI()
    app.state.router_prefix = prefix
    return Request({"type": "http", "method": "GET", "scheme": "https", "app": app,
                    "server": ("data.example", 443), "path": f"{prefix}/search",
                    "root_path": "", "query_string": b"", "headers": []})


def _encoded(segment: str) -> str:
    quoted = quote(segment, safe="")
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted


@pytest.mark.parametrize("prefix", ["/data", ""])
@pytest.mark.parametrize("collection_id", ["col-1", "odd coll", "x.y"])
async def test_stocks_links_with_the_ids_encoded(prefix: str, collection_id: str) -> None:
    """Stock's links, in stock's order, the stored ones resolved as stock resolves them; the
    ids percent-encoded (stock leaves them raw: `p%20q` led to the item `p q`)."""
    request = _request(prefix)
    linker = ItemLinker(get_base_url(request))
    root = get_base_url(request)
    collection = f"{root}collections/{_encoded(collection_id)}"
    for item_id in IDS:
        for stored in (None, [], STORED):
            stock = await ItemLinks(collection_id=collection_id, item_id=item_id,
                                    request=request).get_links(extra_links=stored)
            inferred = {"collection": collection, "parent": collection, "root": root,
                        "self": f"{collection}/items/{_encoded(item_id)}"}
            expected = [{**link, "href": inferred.get(link["rel"], link["href"])}
                        for link in stock]
            assert linker.links(collection_id, item_id, stored) == expected, (item_id, stored)


@pytest.mark.parametrize("item_id", [*IDS, "tilde~1", "Dots.and-Dashes_9", ""])
def test_item_paths_are_encoded_as_quote_encodes(item_id: str) -> None:
    """Ids `quote` leaves alone skip it; every other id is encoded by it; an id of dots
    only has its dots encoded (a dot segment to a client otherwise)."""
    assert item_path("c d", item_id) == f"collections/c%20d/items/{_encoded(item_id)}"


#: each differs from another in one of what a root is made of
SCOPES = [
    {"scheme": "http", "server": ("127.0.0.1", 8080), "root_path": "",
     "headers": [(b"host", b"127.0.0.1:8080")]},
    {"scheme": "https", "server": ("127.0.0.1", 8080), "root_path": "",
     "headers": [(b"host", b"127.0.0.1:8080")]},
    {"scheme": "https", "server": ("127.0.0.1", 8080), "root_path": "/geo",
     "headers": [(b"host", b"127.0.0.1:8080")]},
    {"scheme": "https", "server": ("127.0.0.1", 8080), "root_path": "/geo",
     "app_root_path": "/outer", "headers": [(b"host", b"127.0.0.1:8080")]},
    {"scheme": "https", "server": ("10.0.0.1", 8000), "root_path": "/geo",
     "headers": [(b"accept", b"*/*"), (b"host", b"maps.example")]},
    {"scheme": "https", "server": ("10.0.0.1", 8000), "root_path": "/geo",
     "headers": [(b"host", b"maps.example:8443"), (b"host", b"other.example")]},
    {"scheme": "http", "server": ("10.0.0.1", 80), "root_path": "", "headers": []},
    {"scheme": "http", "server": None, "root_path": "", "headers": []},
    {"scheme": "http", "server": ["::1", 8080], "root_path": "", "app_root_path": "/outer",
     "headers": [(b"host", b"bad host:port")]},
]


@pytest.mark.parametrize("prefix", ["/data", ""])
def test_a_requests_root_is_stocks(prefix: str) -> None:
    """`request_root` remembers stock's `get_base_url` by what it is made of."""
    app = FastAPI()
    app.state.router_prefix = prefix
    for each in SCOPES:
        scope = {"type": "http", "method": "GET", "app": app, "path": f"{prefix}/search",
                 "query_string": b"", **each}
        first, again = request_root(Request(scope)), request_root(Request(dict(scope)))
        assert first == get_base_url(Request(scope)), each
        assert again is first  # remembered


def test_remembered_roots_are_bounded() -> None:
    app = FastAPI()
    app.state.router_prefix = "/data"
    for n in range(1000):  # a client's Host headers
        request_root(Request({"type": "http", "app": app, "scheme": "http", "path": "/",
                              "root_path": "", "server": None, "query_string": b"",
                              "headers": [(b"host", f"h{n}.example".encode())]}))
    assert len(_ROOTS) <= 256
