"""Stock stac-fastapi-pgstac's settings switch our extensions as they switch stock's:
`ENABLED_EXTENSIONS` names our keys too, `VALIDATE_EXTENSIONS` checks item writes, and
stock's own catalogs extension cannot mount beside our catalogs tree."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import ValidationError

from catalogs_ext import CONFORMANCE as TREE_CONFORMANCE
from stac_ext.data_api.search.owner import OWNER_CONFORMANCE
from stac_ext.settings import Settings
from tests.support.stac import make_item

STOCK_KEYS = "query,sort,fields,filter,pagination,collection_search"


async def test_enabled_extensions_switches_ours_off(service_app, anon) -> None:
    ours = {f"http://testserver/data/{c}" for c in (TREE_CONFORMANCE, OWNER_CONFORMANCE)}
    default = (await anon.get("/data/conformance")).json()["conformsTo"]
    assert ours <= set(default)
    assert (await anon.get("/data/catalogs")).status_code == 200

    async with service_app(enabled_extensions=STOCK_KEYS.split(",")) as service:
        c = service.client()
        classes = (await c.get("/data/conformance")).json()["conformsTo"]
        assert not ours & set(classes)
        assert (await c.get("/data/catalogs")).status_code == 404
        r = await c.get("/data/collections/any/items/any/example.py")
        assert r.status_code == 404 and r.json()["code"] == "NotFound"


def test_stock_catalogs_extension_cannot_mount_beside_the_tree() -> None:
    with pytest.raises(ValidationError, match="ENABLE_CATALOGS_EXTENSION=true mounts stock's "
                                              "catalogs extension on /data/catalogs"):
        Settings(database_url="postgresql://u@127.0.0.1/d", enable_catalogs_extension=True)
    alone = Settings(database_url="postgresql://u@127.0.0.1/d", enable_catalogs_extension=True,
                     enabled_extensions=STOCK_KEYS)
    assert alone.enable_catalogs_extension


#: An extension schema: `test:level` must be an integer.
SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
          "properties": {"properties": {"type": "object", "properties": {
              "test:level": {"type": "integer"}}}}}


@pytest.fixture(scope="module")
def schema_url() -> Iterator[str]:
    """The schema, served over real HTTP on loopback."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(SCHEMA).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/test/v1.0.0/schema.json"
    server.shutdown()


def leveled(item_id: str, level: object, schema_url: str) -> dict:
    item = make_item(item_id)
    item["stac_extensions"] = [schema_url]
    item["properties"]["test:level"] = level
    return item


async def test_validate_extensions_checks_item_writes(service_app, issuer, collection: str,
                                                      schema_url: str) -> None:
    items = f"/data/collections/{collection}/items"
    async with service_app(validate_extensions=True) as service:
        c = service.client(issuer.token("alice"))
        r = await c.post(items, json=leveled("bad-level", "high", schema_url))
        assert r.status_code == 400
        assert r.json() == {"code": "BadRequest", "description": "Item 'bad-level' fails the "
                            "schemas of its stac_extensions: 'high' is not of type 'integer'"}
        r = await c.post(items, json=leveled("good-level", 3, schema_url))
        assert r.status_code == 201, r.text
        bulk = await c.post(f"/data/collections/{collection}/bulk_items", json={"items": {
            "bulk-bad": leveled("bulk-bad", "x", schema_url)}, "method": "insert"})
        assert bulk.status_code == 200
        assert bulk.json()["success"] == 0 and bulk.json()["errors"][0]["id"] == "bulk-bad"


async def test_without_validate_extensions_nothing_is_fetched(
        alice_data, collection: str, schema_url: str) -> None:
    r = await alice_data.post(f"/data/collections/{collection}/items",
                              json=leveled("unchecked", "high", "http://127.0.0.1:9/none"))
    assert r.status_code == 201, r.text
