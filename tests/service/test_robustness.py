"""Robustness with real components: bad input, oversized bodies, a database restart,
many concurrent writers; and clients that are not ours (OWSLib Features, pystac-client)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from owslib.ogcapi.features import Features
from pystac_client import Client

from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.service.body_limit import bodiless
from tests.support.cluster import migrated_cluster
from tests.support.http import http_client
from tests.support.stac import make_collection, make_item, unique


async def counts(app) -> tuple[int, int, int]:
    async with app.state.readpool.acquire() as conn:
        return (await conn.fetchval("SELECT count(*) FROM pgstac.items"),
                await conn.fetchval("SELECT count(*) FROM pgstac.collections"),
                await conn.fetchval("SELECT count(*) FROM catalogs.catalogs"))


BAD_REQUESTS = [
    (400, "POST", "/data/search", b"{oops", "application/json"),
    (400, "POST", "/data/search", b'{"limit": "many"}', "application/json"),
    (400, "POST", "/data/search", b'{"bbox": [1, 2, 3, 4, 5, 6, 7]}', "application/json"),
    (400, "POST", "/data/search", b'{"bbox": [10, 10, 0, 0]}', "application/json"),
    (400, "POST", "/data/search", b'{"datetime": "2021-02-30T00:00:00Z"}', "application/json"),
    (400, "POST", "/data/search", b'{"filter": {"op": "like-ish", "args": []}}',
     "application/json"),
    (400, "POST", "/data/search",
     b'{"filter": {"op": "=", "args": [{"property": "no:such"}, 1]}, "limit": -3}',
     "application/json"),
    (400, "GET", "/data/search?limit=1e9999", None, None),
    (400, "GET", "/data/search?limit=-1", None, None),
    (400, "GET", "/data/search?bbox=0,0,0,10,10,10,1", None, None),
    (400, "GET", "/data/search?datetime=2021-01-01/2020-01-01", None, None),
    (400, "GET", "/data/search?datetime=../..", None, None),
    (400, "GET", "/data/search?filter=nope%20%3D%3D%3D%201", None, None),
    (404, "GET", "/data/collections/" + "x" * 5000, None, None),
    (404, "GET", "/data/collections/%C3%A9t%C3%A9-%F0%9F%8C%8A/items", None, None),
    (400, "POST", "/data/catalogs", b'{"id": "' + b"a" * 5000 + b'", "type": "Catalog", '
     b'"description": "d"}', "application/json"),
    (400, "POST", "/data/catalogs", '{"id": "ünï", "type": "Catalog", "description": "d"}'.encode(),
     "application/json"),
    (400, "POST", "/processes/processes/echo/execution", b"[1, 2]", "application/json"),
]


@pytest.mark.parametrize("status, method, path, body, content_type", BAD_REQUESTS)
async def test_bad_input_sweep(app, issuer, status, method, path, body, content_type) -> None:
    client = "geocatalog-processes" if path.startswith("/processes") else "geocatalog"
    before = await counts(app)
    async with http_client(app, issuer.token("sweeper", client=client)) as c:
        headers = {"Content-Type": content_type} if content_type else {}
        r = await c.request(method, path, content=body, headers=headers)
        assert r.status_code == status, r.text[:300]
        error_fields = ({"type", "title", "status", "detail"} if path.startswith("/processes")
                        else {"code", "description"})
        assert set(r.json()) == error_fields
        assert (await c.get("/healthz")).status_code == 200  # the connection stays usable
    assert await counts(app) == before


#: What either API says of a body with a lone surrogate escape (JSON's text, not Unicode's).
NOT_UNICODE = ("The request body's strings must be Unicode text (a lone surrogate, \\ud800 "
               "to \\udfff, is none).")


@pytest.mark.parametrize("path, body", [
    # found by schemathesis: a standing job's process named by a lone surrogate was a 500
    ("/data/subscriptions", b'{"search": {}, "job": {"process": "\\udbf9x", "window": '
                            b'{"items": 2}}}'),
    ("/data/catalogs", b'{"id": "c", "type": "Catalog", "description": "\\uDBBA"}'),
    ("/data/search", b'{"filter": {"op": "=", "args": [{"property": "owner"}, "\\udbba"]}, '
                     b'"filter-lang": "cql2-json"}'),
    ("/processes/processes/echo/execution", b'{"inputs": {"\\ud800": "x"}}'),
])
async def test_a_body_of_lone_surrogates_is_400(app, issuer, path: str, body: bytes) -> None:
    client = "geocatalog-processes" if path.startswith("/processes") else "geocatalog"
    before = await counts(app)
    async with http_client(app, issuer.token("sweeper", client=client)) as c:
        r = await c.post(path, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert (r.json()["detail"] if path.startswith("/processes") else r.json()) == (
        NOT_UNICODE if path.startswith("/processes") else
        {"code": "BadRequest", "description": NOT_UNICODE})
    assert await counts(app) == before


async def test_paired_surrogates_are_unicode_text(app, issuer) -> None:
    """A character beyond the Basic Multilingual Plane, escaped as JSON escapes it (a pair),
    beside an integer beyond 64 bits (JSON, which orjson alone would refuse)."""
    async with http_client(app, issuer.token("pairs")) as c:
        name = unique("waves-")
        r = await c.post("/data/catalogs", content=b'{"id": "' + name.encode() +
                         b'", "type": "Catalog", "description": "Waves \\ud83c\\udf0a", '
                         b'"waves": 100000000000000000000000000000}',
                         headers={"Content-Type": "application/json"})
        assert r.status_code == 201, r.text
        assert r.json()["description"] == "Waves \N{WATER WAVE}"


async def test_oversized_bodies_are_413(service_app, issuer) -> None:
    async with service_app(max_body_bytes=2000) as small:
        c = small.client(issuer.token("big"))
        big = {"type": "FeatureCollection", "features": [make_item(f"b{n}") for n in range(50)]}
        r = await c.post("/data/collections/any-thing/items", json=big)
        assert r.status_code == 413 and r.json()["code"] == "RequestEntityTooLarge"

        async def chunks():  # no Content-Length: counted while streamed
            for _ in range(10):
                yield b" " * 500

        r = await c.post("/data/search", content=chunks(),
                         headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.json()["code"] == "RequestEntityTooLarge"
        r = await c.post("/processes/processes/echo/execution", content=b"{" + b" " * 3000 + b"}",
                         headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.json()["status"] == 413
        assert (await c.get("/data/collections")).status_code == 200


def test_only_a_request_without_a_body_skips_the_limit() -> None:
    """HTTP/1 frames a request's body by `Content-Length` or `Transfer-Encoding`; without
    either it has none, and nothing is counted. HTTP/2 frames a body without either."""
    def scope(version: str, *headers: bytes) -> dict[str, Any]:
        return {"http_version": version, "headers": [(b"host", b"h"),
                                                      *((name, b"1") for name in headers)]}

    assert bodiless(scope("1.1")) and bodiless(scope("1.0"))
    assert not bodiless(scope("1.1", b"content-length"))
    assert not bodiless(scope("1.1", b"transfer-encoding"))
    assert not bodiless(scope("2"))


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    with migrated_cluster("geocatalog-restart-") as cluster:
        yield cluster


async def test_database_restart_while_serving(service_app, own_cluster: Cluster) -> None:
    async with service_app(database=own_cluster.dsn) as service:
        c = service.client()
        assert (await c.get("/data/collections")).status_code == 200
        own_cluster.stop()
        r = await c.get("/data/collections")
        assert r.status_code == 503
        assert r.json()["code"] and r.headers["Retry-After"]
        assert (await c.get("/healthz")).status_code == 503
        own_cluster.start()
        statuses = []
        for _ in range(20):  # stale pooled connections are dropped, new ones made
            statuses.append((await c.get("/data/collections")).status_code)
            if statuses[-1] == 200:
                break
            await asyncio.sleep(0.2)
        assert statuses[-1] == 200, statuses
        assert set(statuses) <= {200, 503}
        assert (await c.get("/healthz")).status_code == 200


async def test_many_concurrent_writers(app, issuer, admin_data: httpx.AsyncClient) -> None:
    collection = unique("test_conv-concurrent_")
    assert (await admin_data.post("/data/collections",
                             json=make_collection(collection))).status_code == 201
    top = unique("busy")
    users = [http_client(app, issuer.token(f"writer{n}")) for n in range(4)]
    try:
        assert (await users[0].post("/data/catalogs", json={
            "id": top, "type": "Catalog", "description": "d"})).status_code == 201

        async def writer(n: int) -> list[int]:
            c = users[n % 4]
            url = f"/data/collections/{collection}/items"
            codes = [(await c.post(url, json=make_item(f"w{n}", x=n % 170))).status_code]
            item = make_item(f"w{n}", x=n % 170)
            item["properties"]["title"] = "updated"
            codes.append((await c.put(f"{url}/w{n}", json=item)).status_code)
            if n % 3 == 0:
                codes.append((await c.delete(f"{url}/w{n}")).status_code)
            codes.append((await users[0].post(f"/data/catalogs/{top}", json={
                "id": f"c{n}", "type": "Catalog", "description": "d"})).status_code)
            return codes

        results = await asyncio.gather(*(writer(n) for n in range(40)))
    finally:
        for c in users:
            await c.aclose()
    codes = {code for result in results for code in result}
    assert codes <= {200, 201, 204}, codes
    page = (await admin_data.get(f"/data/collections/{collection}/items?limit=100")).json()
    kept = sorted(f["id"] for f in page["features"])
    assert kept == sorted(f"w{n}" for n in range(40) if n % 3)
    assert all(f["properties"]["title"] == "updated" for f in page["features"])
    tree = (await admin_data.get(f"/data/catalogs/{top}")).json()
    assert len([link for link in tree["links"] if link["rel"] == "child"]) == 40


async def test_owslib_features_and_pystac_client(live_server: str, issuer) -> None:
    collection = unique("test_conv-clients_")
    admin = {"Authorization": f"Bearer {issuer.token('root', rights=['manageCollections'])}"}
    user = {"Authorization": f"Bearer {issuer.token('clara')}"}
    async with httpx.AsyncClient(base_url=f"{live_server}/data") as http:
        assert (await http.post("/collections", json=make_collection(collection),
                                headers=admin)).status_code == 201
        features = [make_item(f"f{n:02d}", x=n, day=1 + n % 28) for n in range(25)]
        for n, feature in enumerate(features):
            feature["properties"]["rank"] = n
        r = await http.post(f"/collections/{collection}/items", headers=user,
                            json={"type": "FeatureCollection", "features": features})
        assert r.status_code == 201

    def with_owslib() -> tuple[int, str, int, int]:
        api = Features(f"{live_server}/data/")
        listed = len(api.collections()["collections"])  # the first page
        described = api.collection(collection)["id"]
        page = api.collection_items(collection, bbox=[-1, -1, 10.5, 2], limit=5)
        return listed, described, page["numberMatched"], len(page["features"])

    listed, described, matched, returned = await asyncio.to_thread(with_owslib)
    assert listed >= 1 and described == collection
    assert matched == 11 and returned == 5

    def with_pystac_client() -> tuple[int | None, list[str], list[str]]:
        catalog = Client.open(f"{live_server}/data/")
        search = catalog.search(collections=[collection], bbox=[-1, -1, 30, 2],
                                datetime="2021-01-01/2021-01-20",
                                filter={"op": ">=", "args": [{"property": "rank"}, 5]},
                                sortby="-datetime", limit=3,
                                query=None)
        ids = [item.id for item in search.items()]
        owned = catalog.search(collections=[collection], limit=7,
                               filter={"op": "=", "args": [{"property": "owner"}, "clara"]})
        return search.matched(), ids, [item.id for item in owned.items()]

    matched, ids, owned = await asyncio.to_thread(with_pystac_client)
    expected = [f"f{n:02d}" for n in range(5, 20)]
    assert matched == len(expected) and sorted(ids) == expected
    assert ids == sorted(ids, key=lambda i: int(i[1:]), reverse=True)  # -datetime
    assert sorted(owned) == [f"f{n:02d}" for n in range(25)]
