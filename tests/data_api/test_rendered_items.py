"""Items kept as served (`rendered_items`): the same answers as rendering them again, and
never a stale one after a write through the API, `geocatalog load`, a collection change or
a delete."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import orjson
import psycopg
import pytest

import catalogs_ext
from stac_ext.data_api import queries
from stac_ext.data_api.rendered_items import RenderedItems
from tests.support.stac import make_collection, make_item, unique

ROOT = "http://testserver/data/"


def test_an_entry_answers_its_own_text_and_root_only() -> None:
    kept = RenderedItems(1000)
    body = b'{"id":"a"}'
    assert orjson.dumps(kept.put(kept.key(ROOT, "text a"), body)) == body
    served = kept.get(kept.key(ROOT, "text a"))
    assert served is not None and orjson.dumps([served]) == b"[" + body + b"]"
    assert kept.get(kept.key(ROOT, "text a ")) is None
    assert kept.get(kept.key("http://other/data/", "text a")) is None


def test_the_oldest_go_first_and_the_kept_stay_whole() -> None:
    """Bodies of random sizes through a small buffer (many wraps): after every write the
    kept entries are the latest ones, each whole, within the budget; a body larger than
    the budget is served but not kept."""
    rng = random.Random(3)
    kept = RenderedItems(1000)
    bodies: list[bytes] = []
    for n in range(400):
        bodies.append(json.dumps({"n": n, "pad": "x" * rng.randrange(10, 300)}).encode())
        kept.put(kept.key(ROOT, str(n)), bodies[-1])
        found = [kept.get(kept.key(ROOT, str(i))) for i in range(n + 1)]
        present = [i for i, f in enumerate(found) if f is not None]
        assert present == list(range(n + 1 - len(present), n + 1))  # the latest, in a row
        assert all(orjson.dumps(found[i]) == bodies[i] for i in present)
        assert sum(len(bodies[i]) for i in present) <= 1000 and len(kept) == len(present)
    assert 3 <= len(kept) < 400
    large = b'"' + b"y" * 2000 + b'"'
    assert orjson.dumps(kept.put(kept.key(ROOT, "large"), large)) == large
    assert kept.get(kept.key(ROOT, "large")) is None


@pytest.mark.parametrize(("statement", "args"), [
    (queries.SEARCH, "('{}')"),
    (queries.search_of(catalogs_ext.SUBTREE_BODY), "('{}', 'a/b')")])
def test_a_page_runs_its_search_once(database_url: str, statement: str, args: str) -> None:
    """The page split in two (`queries.PAGE`) evaluates the search once: a catalog's is
    STABLE, which PostgreSQL would otherwise inline at each use of the page (twice the
    database time)."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        conn.execute("PREPARE page AS " + queries.PAGE.format(search=statement))
        plan = "\n".join(row[0] for row in conn.execute(f"EXPLAIN VERBOSE EXECUTE page{args}"))
    assert plan.count("search(") == 1, plan


@pytest.fixture
async def uncached(service_app) -> AsyncIterator[httpx.AsyncClient]:
    """The same service without kept items: every answer rendered afresh."""
    async with service_app(rendered_items_mb=0) as service:
        assert service.app.state.rendered_items is None
        yield service.client()


async def _answers(client: httpx.AsyncClient, collection_id: str, item_id: str
                   ) -> list[httpx.Response]:
    """What the read paths answer for the item: itself, its collection's page, GET and
    POST searches."""
    items_url = f"/data/collections/{collection_id}/items"
    return [await client.get(f"{items_url}/{item_id}"), await client.get(items_url),
            await client.get("/data/search", params={"collections": collection_id}),
            await client.post("/data/search", json={"collections": [collection_id]})]


async def test_kept_answers_are_rendered_ones_and_never_stale(
        app, admin_data: httpx.AsyncClient, alice_data: httpx.AsyncClient,
        uncached: httpx.AsyncClient, database_url: str, tmp_path: Path) -> None:
    """Each read path answers byte for byte as the service without kept items does, asked
    twice (the second answer comes from what was kept), after each of: an update through
    the API, an upsert by `geocatalog load`, a change of the collection's `item_assets` and
    a delete."""
    collection_id = unique("test_conv-kept_")
    collection = {**make_collection(collection_id), "item_assets": {
        "data": {"type": "application/vnd+zarr", "roles": ["data"], "title": "the data"}}}
    assert (await admin_data.post("/data/collections", json=collection)).status_code == 201
    item = {**make_item("kept", collection_id, data="s3://bucket/kept.zarr"),
            "stac_version": "1.0.0"}  # as `geocatalog load` would otherwise store a marker
    item["properties"]["title"] = "posted"
    item["assets"]["data"]["type"] = "application/vnd+zarr"
    item["assets"]["data"]["title"] = "the data"  # stored without it: item_assets has it
    assert (await alice_data.post(f"/data/collections/{collection_id}/items",
                                  json=item)).status_code == 201
    kept: RenderedItems = app.state.rendered_items

    def is_kept() -> bool:
        with psycopg.connect(database_url) as conn:  # as the API's connections are set
            conn.execute("SET search_path TO pgstac, public")
            row = conn.execute(queries.STORED_ITEM.replace("$1", "%s").replace("$2", "%s")
                               .replace("$3", "%s"), (collection_id, "kept", "null")).fetchone()
        assert row is not None
        return kept.get(kept.key(ROOT, row[0])) is not None

    async def agreed(title: str) -> None:
        fresh = await _answers(uncached, collection_id, "kept")
        for _ in range(2):
            answers = await _answers(alice_data, collection_id, "kept")
            assert [r.status_code for r in answers] == [200] * 4
            assert [r.content for r in answers] == [r.content for r in fresh]
        assert is_kept()  # the second answers were the kept ones
        single, *pages = [r.json() for r in answers]
        for served in [single, *(page["features"][0] for page in pages)]:
            assert served["properties"]["title"] == title
            assert served["assets"]["data"]["title"] == "the data"  # merged back
            assert "explorer" in {link["rel"] for link in served["links"]}

    await agreed("posted")
    item["properties"]["title"] = "first"
    r = await alice_data.put(f"/data/collections/{collection_id}/items/kept", json=item)
    assert r.status_code == 200, r.text
    await agreed("first")

    item["properties"]["title"] = "loaded"
    path = tmp_path / "items.ndjson"
    path.write_text(json.dumps({**item, "properties": {**item["properties"], "owner": "alice"}}))
    out = subprocess.run([sys.executable, "-m", "stac_ext.cli", "load", str(path),
                          "--method", "upsert"],
                         env={**os.environ, "DATABASE_URL": database_url},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    await agreed("loaded")

    collection["item_assets"]["data"]["title"] = "renamed"
    r = await admin_data.put(f"/data/collections/{collection_id}", json=collection)
    assert r.status_code == 200, r.text
    await agreed("loaded")  # pgstac keeps the base item the item was stored against

    r = await alice_data.delete(f"/data/collections/{collection_id}/items/kept")
    assert r.status_code == 204, r.text
    single, *pages = await _answers(alice_data, collection_id, "kept")
    assert single.status_code == 404
    assert [page.json()["features"] for page in pages] == [[], [], []]


async def test_chosen_fields_are_never_the_kept_item(alice_data: httpx.AsyncClient,
                                                     collection: str) -> None:
    """An item served whole (and kept), then asked for with `fields`: only those."""
    item = make_item("fields", collection)
    assert (await alice_data.post(f"/data/collections/{collection}/items",
                                  json=item)).status_code == 201
    whole = (await alice_data.get(f"/data/collections/{collection}/items")).json()
    assert "assets" in whole["features"][0]
    chosen = await alice_data.get(f"/data/collections/{collection}/items",
                                  params={"fields": "id,-assets"})
    assert chosen.status_code == 200
    assert "assets" not in chosen.json()["features"][0]
    assert chosen.json()["features"][0]["id"] == "fields"
