"""Where we rewrite, copy or lean on the internals of stock stac-fastapi(-pgstac), FastAPI
or Starlette, the stock source we mirror is pinned: when an upgrade changes it, this test
fails, naming ours to read again beside theirs, so that an upgrade is a conscious step.
After checking ours against the new source, record the new pin (the test prints it).

The table is the whole list; docs/contributors/architecture.md gives its count (checked
here). Stock's code we copy is in `stac_ext/data_api/stock.py`; stock's client methods we
rewrite are overrides in our client subclasses (stock's extension point).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from typing import Any

import pytest

from tests.support.paths import ROOT

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit

#: stock object -> (its source's pin, ours, and why we do not simply call it)
MIRRORED: dict[str, tuple[str, str, str]] = {
    "stac_fastapi.pgstac.core:CoreCrudClient._search_base": (
        "95f11e6bc0c28648", "stac_ext/data_api/read_client.py: CoreClient._search_base",
        "rewritten: items rendered once and kept, our search function"),
    "stac_fastapi.pgstac.core:CoreCrudClient._clean_search_args": (
        "0111481bf3f088ec", "stac_ext/data_api/read_client.py: CoreClient._clean_search_args",
        "extended: owner, free text and the reader of a search"),
    "stac_fastapi.pgstac.core:CoreCrudClient.item_collection": (
        "c191da1a27d4a49d", "stac_ext/data_api/read_client.py: CoreClient.item_collection",
        "rewritten: an items page through our search, its links"),
    "stac_fastapi.pgstac.core:CoreCrudClient.get_search": (
        "caede22babf33764", "stac_ext/data_api/read_client.py: CoreClient.get_search",
        "rewritten: its self link keeps the page's parameters"),
    "stac_fastapi.pgstac.core:CoreCrudClient.get_item": (
        "2fe1c80b56f845a5", "stac_ext/data_api/read_client.py: CoreClient.get_item",
        "rewritten: one statement, visibility in the SQL, kept rendering"),
    "stac_fastapi.pgstac.core:CoreCrudClient.all_collections": (
        "ef7b75a163b8f552", "stac_ext/data_api/read_client.py: CoreClient.all_collections",
        "wrapped: the collections listing per reader"),
    "stac_fastapi.pgstac.transactions:TransactionsClient.create_item": (
        "a49fe3dda38c60d8", "stac_ext/data_api/write_client.py: TransactionsClient.create_item",
        "rewritten: owner stamping, 201 + Location, posts written together"),
    "stac_fastapi.pgstac.transactions:TransactionsClient.update_item": (
        "7ac369f51f23616a", "stac_ext/data_api/write_client.py: TransactionsClient.update_item",
        "rewritten: the item write rule (item_writers), under the id lock"),
    "stac_fastapi.pgstac.transactions:TransactionsClient.patch_item": (
        "3b61f5c4771e287d", "stac_ext/data_api/write_client.py: TransactionsClient.patch_item",
        "rewritten: the item write rule (item_writers), under the id lock"),
    "stac_fastapi.pgstac.transactions:TransactionsClient.delete_item": (
        "69a0ac23b98836b2", "stac_ext/data_api/write_client.py: TransactionsClient.delete_item",
        "rewritten: the item write rule, catalog links removed in its transaction"),
    "stac_fastapi.pgstac.transactions:BulkTransactionsClient.bulk_item_insert": (
        "0386a3d5a49676e4",
        "stac_ext/data_api/write_client.py: BulkTransactionsClient.bulk_item_insert",
        "rewritten: each item refused or written under the single write's rules"),
    "stac_fastapi.pgstac.app:instantiate_api": (
        "a39baf97c3d587ec", "stac_ext/data_api/stock.py: instantiate_api",
        "copied: it builds a plain StacApi; ours builds DataStacApi"),
    "stac_fastapi.api.routes:create_async_endpoint": (
        "a69e93bed591ab31", "stac_ext/data_api/stock.py: create_async_endpoint",
        "mirrored: the endpoint takes its request model's parameters and builds it"),
    "stac_fastapi.api.middleware:ProxyHeaderMiddleware": (
        "e1dbe055c5cfd0e8", "stac_ext/platform/service/forwarded.py: unchanged_by_stock",
        "leans on: which requests it leaves as they are (those are passed by)"),
    "starlette.middleware.cors:CORSMiddleware.send": (
        "e6a44d3c8abaeaa4", "stac_ext/platform/service/cross_origin.py: CrossOrigin",
        "leans on: what it adds to an answer to a request without Origin (Vary)"),
    "fastapi.applications:FastAPI.setup": (
        "b1d5170e8194ac54",
        "stac_ext/platform/service/openapi.py: the OpenAPI route's app replaced",
        "leans on: the route FastAPI makes for the OpenAPI document"),
    "starlette.routing:Route.matches": (
        "4de50d376de04a00", "stac_ext/platform/telemetry/http_metrics.py: RouteRecorder",
        "leans on: the matched route left in the request's scope"),
    "starlette.routing:Mount.matches": (
        "ac97bc77afeab550", "stac_ext/platform/telemetry/http_metrics.py: RouteRecorder",
        "leans on: the matched route left in the scope, under a mount"),
}


def _source_pin(path: str) -> str:
    module, _, attribute = path.partition(":")
    found: Any = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return hashlib.sha256(inspect.getsource(found).encode()).hexdigest()[:16]


@pytest.mark.parametrize("stock", sorted(MIRRORED))
def test_the_stock_source_we_mirror_is_unchanged(stock: str) -> None:
    pinned, ours, why = MIRRORED[stock]
    now = _source_pin(stock)
    assert now == pinned, (
        f"{stock} changed upstream (pin {now}, was {pinned}). Ours: {ours} ({why}). Read "
        "both, bring ours up to date, then record the new pin in this table.")


def test_each_of_ours_is_where_the_table_says_and_the_docs_count_them() -> None:
    for ours in (entry[1] for entry in MIRRORED.values()):
        path, _, name = ours.partition(": ")
        source = (ROOT / path).read_text()
        # the last dotted part names a def, or the leaning code's class
        assert name.split(".")[-1].split(" ")[0] in source or "replaced" in name, ours
    docs = (ROOT / "docs" / "contributors" / "architecture.md").read_text()
    assert f"in **{len(MIRRORED)} places**" in docs
