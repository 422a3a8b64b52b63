"""A subscription is told of exactly the items its search finds: random items, however they
arrive (the API one by one and in bulk, `geocatalog load`, an upsert), against searches of
every criterion (collections, bbox, intersects, datetime, q, a CQL2 filter, owner, a
catalog's subtree), each subscription's feed compared with `POST /search` for the same
search; and without any subscription, item writes write no outbox row."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.support.cli import run_cli
from tests.support.cluster import migrated_database
from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT, TestIssuer
from tests.support.roles import role_env
from tests.support.stac import make_collection, make_item

COLLECTIONS = ["test_conv-match_a", "test_conv-match_b", "test_conv-match_c"]
WORDS = ["sea surface temperature", "salinity of the north sea", "wind speed", "rain"]
SEARCHES: list[dict[str, Any]] = [
    {"collections": [COLLECTIONS[0]]},
    {"collections": COLLECTIONS[:2], "bbox": [-20, -10, 30, 40]},
    {"bbox": [100, -60, 179, 60]},
    {"intersects": {"type": "Polygon", "coordinates": [
        [[-60, -30], [0, -30], [0, 30], [-60, 30], [-60, -30]]]}},
    {"datetime": "2021-03-01T00:00:00Z/2021-06-30T23:59:59Z"},
    {"datetime": "2022-01-01T00:00:00Z/.."},
    {"q": ["sea"]},
    {"collections": [COLLECTIONS[2]], "q": ["temperature"]},
    {"filter": {"op": "<", "args": [{"property": "eo:cloud_cover"}, 30]},
     "filter-lang": "cql2-json"},
    {"filter": {"op": "and", "args": [
        {"op": ">=", "args": [{"property": "eo:cloud_cover"}, 50]},
        {"op": "like", "args": [{"property": "title"}, "%wind%"]}]},
     "filter-lang": "cql2-json", "bbox": [-180, -90, 0, 90]},
    {"owner": "bob"},
    {"owner": "alice", "collections": [COLLECTIONS[1]]},
    {"catalog": "match-tree"},
    # a bbox with heights (its solid stopped every subscription's matching), DATE and BBOX
    # literals (a date never matched; a box was refused)
    {"bbox": [-20, -10, -100, 30, 40, 100]},
    {"filter": {"op": ">", "args": [{"property": "datetime"}, {"date": "2021-06-01"}]},
     "filter-lang": "cql2-json"},
    {"filter": "S_INTERSECTS(geometry, BBOX(-60, -30, 0, 30))", "filter-lang": "cql2-text"},
]


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return migrated_database(database_url, "subs_match_")


@pytest.fixture(scope="module")
async def service(service_app, database: str) -> AsyncIterator[Any]:
    async with service_app(database=database, subscriptions_poll_seconds=0.1) as started:
        yield started.app


def random_item(rng: random.Random, n: int) -> dict:
    x, y = rng.uniform(-175, 170), rng.uniform(-80, 75)
    doc = make_item(f"m{n:03d}")
    doc["geometry"]["coordinates"] = [[[x, y], [x + 4, y], [x + 4, y + 4], [x, y + 4],
                                       [x, y]]]
    doc["properties"].update(
        datetime=f"{rng.choice([2020, 2021, 2022])}-{rng.randint(1, 12):02d}-"
                 f"{rng.randint(1, 28):02d}T12:00:00Z",
        title=rng.choice(WORDS), **{"eo:cloud_cover": rng.randint(0, 100)})
    return doc


async def feed_ids(client: httpx.AsyncClient, subscription: str) -> set[str]:
    found: set[str] = set()
    url: str | None = f"/data/subscriptions/{subscription}/events?limit=1000"
    while url:
        page = (await client.get(url)).json()
        found |= {f"{e['data']['collection']}/{e['data']['id']}" for e in page["events"]}
        following = [link for link in page["links"] if link["rel"] == "next"]
        url = following[0]["href"].removeprefix("http://testserver") if following else None
    return found


async def search_ids(client: httpx.AsyncClient, search: dict) -> set[str]:
    body = {k: v for k, v in search.items() if k != "catalog"}
    path = f"/data/catalogs/{search['catalog']}/_search" if "catalog" in search \
        else "/data/search"
    found: set[str] = set()
    answer = (await client.post(path, json={**body, "limit": 1000})).json()
    # the item written before any subscription is never told
    found |= {f"{f['collection']}/{f['id']}" for f in answer["features"] if f["id"] != "m999"}
    assert not [link for link in answer["links"] if link["rel"] == "next"]
    return found


async def test_each_feed_is_its_search(service, database, issuer: TestIssuer,
                                       tmp_path: Path) -> None:
    rng = random.Random(78)
    async with http_client(service, issuer.token("root", rights=[ADMIN_RIGHT])) as admin, \
            http_client(service, issuer.token("alice")) as alice, \
            http_client(service, issuer.token("bob")) as bob:
        # no subscription yet: item writes write no outbox row
        for collection in COLLECTIONS:
            assert (await admin.post("/data/collections", json=make_collection(collection))
                    ).status_code == 201
        assert (await alice.post(f"/data/collections/{COLLECTIONS[0]}/items",
                                 json=random_item(rng, 999))).status_code == 201
        with psycopg.connect(database) as conn:
            assert conn.execute("SELECT count(*) FROM geocatalog.item_events").fetchone() \
                == (0,)
        assert (await alice.post("/data/catalogs", json={
            "id": "match-tree", "type": "Catalog", "description": "scope", "links": [
                {"rel": "child", "href": f"collections/{COLLECTIONS[2]}"}]})).status_code \
            == 201
        made = []
        for search in SEARCHES:
            r = await alice.post("/data/subscriptions", json={"search": search})
            assert r.status_code == 201, (search, r.text)
            made.append(r.json()["id"])

        # items arrive: one by one (alice's, bob's), in bulk, by `geocatalog load`
        items = [random_item(rng, n) for n in range(90)]
        for n, item in enumerate(items[:30]):
            client = alice if n % 2 else bob
            r = await client.post(f"/data/collections/{COLLECTIONS[n % 3]}/items", json=item)
            assert r.status_code == 201, r.text
        for c, collection in enumerate(COLLECTIONS):
            bulk = items[30 + 10 * c: 40 + 10 * c]
            r = await alice.post(f"/data/collections/{collection}/items",
                                 json={"type": "FeatureCollection", "features": bulk})
            assert r.status_code == 201, r.text
        loaded = tmp_path / "loaded.ndjson"
        loaded.write_text("\n".join(json.dumps({**item, "collection": COLLECTIONS[n % 3]})
                                    for n, item in enumerate(items[60:])))
        env = {"DATABASE_URL": database, **role_env(database)}
        out = run_cli("load", str(loaded), "--owner", "bob", env=env)
        assert out.returncode == 0, out.stderr
        await asyncio.sleep(3)
        with psycopg.connect(database) as conn:  # all matched
            assert conn.execute("SELECT count(*) FROM geocatalog.item_events").fetchone() \
                == (0,)
        for subscription, search in zip(made, SEARCHES, strict=True):
            assert await feed_ids(alice, subscription) == await search_ids(alice, search), \
                search

        # and some change: an upsert by `geocatalog load` moves five items
        for item in items[60:65]:
            item["geometry"]["coordinates"] = [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]
        loaded.write_text("\n".join(json.dumps({**item, "collection": COLLECTIONS[n % 3]})
                                    for n, item in enumerate(items[60:65])))
        out = run_cli("load", str(loaded), "--owner", "bob", "--method", "upsert", env=env)
        assert out.returncode == 0, out.stderr
        await asyncio.sleep(3)
        moved = (await alice.get(f"/data/subscriptions/{made[1]}/events?limit=1000")).json()
        kinds = [e["type"].rsplit(".", 1)[1] for e in moved["events"]
                 if e["data"]["id"] in {i["id"] for i in items[60:65]}]
        # each moved item of its two collections (four of the five), now in its box, told
        # updated (pgstac's upsert deletes and writes it again, in one transaction)
        assert kinds.count("updated") == 4 and "deleted" not in kinds
