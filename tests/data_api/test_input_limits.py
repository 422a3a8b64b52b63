"""Limits on what a client may send, each a 400 saying which, never a 500 or a stored
object that cannot be served: non-finite numbers, nesting depth, id length, page size; and
a catalog never keeps a link to an item deleted while the catalog was being written."""

from __future__ import annotations

import asyncio

import httpx
import psycopg
import pytest

from stac_ext.data_api.item_rules import MAX_ID_LENGTH
from stac_ext.platform.service.json_body import MAX_JSON_DEPTH
from tests.support.stac import make_item, unique


def nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth):
        value = {"n": value}
    return value


BEYOND_64_BITS = ("{} is beyond what an integer may be: integers must be within 64 bits "
                  "(-9223372036854775808 to 9223372036854775807)")


async def test_a_number_beyond_floats_is_400(alice_data: httpx.AsyncClient,
                                            collection: str) -> None:
    """`1e400` overflows to infinity, which was stored as null (201); nothing is stored
    now. (An integer of any size is kept: the database keeps it.)"""
    item = '{"id": "big", "type": "Feature", "properties": {"datetime": ' \
        '"2021-01-01T00:00:00Z", "x": %s}, "geometry": {"type": "Point", "coordinates": ' \
        '[0, 0]}, "assets": {}}'
    for number in ("1e400", "-2.5E+999"):
        r = await alice_data.post(f"/data/collections/{collection}/items",
                                  content=item % number,
                                  headers={"Content-Type": "application/json"})
        assert (r.status_code, r.json()) == (400, {"code": "BadRequest", "description": (
            f"{number} is beyond what a number may be: numbers must be finite (at most "
            "about 1.8e308)")}), number
    assert (await alice_data.get(f"/data/collections/{collection}/items/big")
            ).status_code == 404
    r = await alice_data.post(f"/data/collections/{collection}/items",
                              content=item % (2**80), headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    stored = await alice_data.get(f"/data/collections/{collection}/items/big")
    assert stored.json()["properties"]["x"] == 2**80


async def test_non_finite_numbers_are_400(alice_data: httpx.AsyncClient, anon,
                                          collection: str) -> None:
    body = '{"id": "nan", "type": "Feature", "properties": {"datetime": "2021-01-01T00:00:00Z"},' \
        ' "geometry": {"type": "Point", "coordinates": [NaN, Infinity]}, "assets": {}}'
    r = await alice_data.post(f"/data/collections/{collection}/items", content=body,
                              headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (400, {
        "code": "BadRequest",
        "description": "NaN is not a JSON number: numbers must be finite"})
    r = await anon.post("/data/search", content='{"bbox": [0, 0, 1, -Infinity]}',
                        headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    r = await anon.get("/data/search", params={"bbox": "NaN,0,1,1"})
    assert (r.status_code, r.json()["description"]) == (
        400, "bbox: the coordinates must be finite numbers.")


async def test_deep_nesting_is_400(alice_data: httpx.AsyncClient, anon,
                                   collection: str) -> None:
    too_deep = f"The request body nests deeper than {MAX_JSON_DEPTH} levels."
    r = await alice_data.post("/data/catalogs", json={
        "id": unique("deep-"), "type": "Catalog", "description": "d", "x": nested(300)})
    assert (r.status_code, r.json()["description"]) == (400, too_deep)
    item = make_item("deep")
    item["properties"]["x"] = nested(300)
    r = await alice_data.post(f"/data/collections/{collection}/items", json=item)
    assert (r.status_code, r.json()["description"]) == (400, too_deep)
    clause: dict = {"op": "=", "args": [{"property": "id"}, "a"]}
    for _ in range(200):
        clause = {"op": "or", "args": [clause, {"op": "=", "args": [{"property": "id"}, "b"]}]}
    r = await anon.post("/data/search", json={"filter": clause, "filter-lang": "cql2-json"})
    assert (r.status_code, r.json()["description"]) == (400, too_deep)
    shallow = make_item("shallow")
    shallow["properties"]["x"] = nested(MAX_JSON_DEPTH - 10)
    r = await alice_data.post(f"/data/collections/{collection}/items", json=shallow)
    assert r.status_code == 201, r.text
    assert (await anon.get(r.headers["Location"])).status_code == 200


async def test_long_ids_are_400(alice_data: httpx.AsyncClient, admin_data,
                                collection: str) -> None:
    r = await alice_data.post(f"/data/collections/{collection}/items",
                              json=make_item("x" * 10_000))
    assert (r.status_code, r.json()["description"]) == (
        400, f"Item id of 10000 characters: at most {MAX_ID_LENGTH}.")
    r = await alice_data.post(f"/data/collections/{collection}/items",
                              json=make_item("y" * MAX_ID_LENGTH))
    assert r.status_code == 201, r.text
    r = await admin_data.post("/data/collections", json={"id": "a-" + "b" * 300})
    assert r.status_code == 400


@pytest.mark.parametrize("method, path", [("GET", "/data/search"),
                                          ("GET", "/data/collections/{c}/items"),
                                          ("POST", "/data/search")])
async def test_page_size_is_cropped(service_app, issuer, alice_data: httpx.AsyncClient,
                                    collection: str, method: str, path: str) -> None:
    """A `limit` beyond MAX_PAGE_SIZE gets MAX_PAGE_SIZE items and a `next` link (stock
    crops GET's at 10,000; POST bodies are cropped too)."""
    for n in range(3):
        r = await alice_data.post(f"/data/collections/{collection}/items",
                                  json=make_item(f"page{n}"))
        assert r.status_code == 201, r.text
    url = path.format(c=collection)
    async with service_app(max_page_size=2) as small:
        c = small.client()
        r = await (c.get(url, params={"limit": 1_000_000_000_000, "collections": collection})
                   if method == "GET" else
                   c.post(url, json={"limit": 1_000_000_000_000, "collections": [collection]}))
    assert r.status_code == 200, r.text
    assert len(r.json()["features"]) == 2
    assert [link["rel"] for link in r.json()["links"] if link["rel"] == "next"] == ["next"]


async def test_a_duplicate_says_so(alice_data: httpx.AsyncClient, collection: str) -> None:
    assert (await alice_data.post(f"/data/collections/{collection}/items",
                                  json=make_item("twice"))).status_code == 201
    r = await alice_data.post(f"/data/collections/{collection}/items", json=make_item("twice"))
    assert (r.status_code, r.json()) == (409, {
        "code": "ConflictError", "description": (
            f'An item "twice" exists already in collection {collection}: replace it (PUT), '
            "or give another id.")})
    # among items posted together, which (pgstac's error says no more); nothing written
    r = await alice_data.post(f"/data/collections/{collection}/items", json={
        "type": "FeatureCollection", "features": [make_item("once"), make_item("twice")]})
    assert (r.status_code, r.json()) == (409, {
        "code": "ConflictError", "description": (
            f'Items exist already in collection {collection}: "twice"; none of the 2 was '
            "written.")})
    assert (await alice_data.get(f"/data/collections/{collection}/items/once")).status_code \
        == 404


async def test_items_posted_together_with_one_id_say_which(alice_data: httpx.AsyncClient,
                                                          collection: str) -> None:
    """Two features of one FeatureCollection with one id were refused as existing already
    (409), though neither did: a 400 naming both, and nothing stored."""
    url = f"/data/collections/{collection}/items"
    r = await alice_data.post(url, json={"type": "FeatureCollection", "features": [
        make_item("one"), make_item("two"), make_item("one")]})
    assert (r.status_code, r.json()) == (400, {
        "code": "InvalidRequest", "description": (
            'FeatureCollection.features.2.id: "one" is features.0\'s id too; items posted '
            "together have ids of their own")}), r.text
    assert [(await alice_data.get(f"{url}/{i}")).status_code for i in ("one", "two")] == \
        [404, 404]


@pytest.fixture
async def linked_item(alice_data: httpx.AsyncClient, collection: str) -> tuple[str, str, str]:
    """(collection, item, catalog): a catalog of alice's and an item of hers."""
    item, top = unique("racy-"), unique("race-")
    assert (await alice_data.post(f"/data/collections/{collection}/items",
                                  json=make_item(item))).status_code == 201
    assert (await alice_data.post("/data/catalogs", json={
        "id": top, "type": "Catalog", "description": "race"})).status_code == 201
    return collection, item, top


async def test_item_deleted_while_a_catalog_links_it(database_url: str, alice_data,
                                                     linked_item) -> None:
    """The catalog's transaction holds the item (as a forced PUT does) while the item is
    deleted: the delete waits, then removes the link that transaction wrote."""
    collection, item, top = linked_item
    with psycopg.connect(database_url) as held:
        held.execute("SELECT 1 FROM pgstac.items WHERE collection = %s AND id = %s "
                     "FOR KEY SHARE", (collection, item))
        delete = asyncio.create_task(
            alice_data.delete(f"/data/collections/{collection}/items/{item}"))
        await asyncio.sleep(1)
        assert not delete.done()  # waiting for the catalog's transaction
        held.execute("INSERT INTO catalogs.links (catalog_pk, position, collection_id, "
                     "item_id) SELECT pk, 1, %s, %s FROM catalogs.catalogs WHERE path = %s",
                     (collection, item, top))
        held.commit()
        assert (await delete).status_code == 204
    with psycopg.connect(database_url) as conn:
        links = conn.execute("SELECT count(*) FROM catalogs.links WHERE item_id = %s",
                             (item,)).fetchone()
    assert links == (0,)


async def test_catalog_linking_an_item_being_deleted(database_url: str, alice_data, app,
                                                     issuer, linked_item) -> None:
    """The item's delete is under way when a forced PUT links it: the PUT waits, then
    finds the item gone (400), and nothing links to it."""
    collection, item, top = linked_item
    editor = httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                               base_url="http://testserver", headers={
        "Authorization": f"Bearer {issuer.token('alice', rights=['updateCatalog'])}"})
    with psycopg.connect(database_url) as deleting:
        deleting.execute("SET search_path TO pgstac, public")
        deleting.execute("SELECT pgstac.delete_item(%s, %s)", (item, collection))
        put = asyncio.create_task(editor.put(
            f"/data/catalogs/{top}?_force=true", json={
                "id": top, "type": "Catalog", "description": "race", "links": [
                    {"rel": "item", "href": f"collections/{collection}/items/{item}"}]}))
        await asyncio.sleep(1)
        assert not put.done()  # waiting for the delete's transaction
        deleting.commit()
        r = await put
    await editor.aclose()
    assert (r.status_code, r.json()["description"]) == (
        400, f"Links to what does not exist: item {collection}/{item}")


async def test_number_matched_follows_writes(service_app, issuer, alice_data,
                                             collection: str) -> None:
    """With SEARCH_COUNT_TTL=0 the count is exact at once (by default it may lag 10 s)."""
    async with service_app(search_count_ttl="0 seconds") as exact:
        c = exact.client()
        for n in range(3):
            r = await alice_data.post(f"/data/collections/{collection}/items",
                                      json=make_item(f"counted{n}"))
            assert r.status_code == 201
            page = (await c.get("/data/search", params={"collections": collection})).json()
            assert page["numberMatched"] == n + 1


async def test_number_matched_is_exact_or_absent(service_app, alice_data, collection: str
                                                 ) -> None:
    """Up to SEARCH_COUNT_MAX matches a page's `numberMatched` is their number; above it the
    page has none, its `next` link all the same; `/aggregate`'s total counts them all."""
    async with service_app(search_count_ttl="0 seconds", search_count_max=2) as bounded:
        c = bounded.client()
        matched = []
        for n in range(3):
            r = await alice_data.post(f"/data/collections/{collection}/items",
                                      json=make_item(f"bounded{n}", day=n + 1))
            assert r.status_code == 201
            for path in ("/data/search", f"/data/collections/{collection}/items"):
                page = (await c.get(path, params={"collections": collection, "limit": 1})).json()
                matched.append(page.get("numberMatched"))
        assert matched == [1, 1, 2, 2, None, None]
        assert [link["rel"] for link in page["links"] if link["rel"] == "next"] == ["next"]
        r = await c.get("/data/aggregate", params={"collections": collection,
                                                   "aggregations": "total_count"})
        assert r.json()["aggregations"] == [
            {"name": "total_count", "data_type": "integer", "value": 3}]


OFFSET_OF_A_DAY = "2020-01-01T00:00:00+24:00"


async def test_datetimes_out_of_range_are_400_in_our_words(
        alice_data: httpx.AsyncClient, anon, collection: str) -> None:
    """Not Python's words ("offset must be a timedelta strictly between ..."), not a 500
    (a date-time at year 9999 with a negative offset overflows in UTC)."""
    r = await alice_data.post("/data/catalogs", json={
        "id": unique("dt_"), "type": "Catalog", "description": "d"})
    assert r.status_code == 201, r.text
    root = r.json()["id"]
    said = (f"datetime: {OFFSET_OF_A_DAY!r} is not an RFC 3339 date-time with every field in "
            "range (e.g. 2020-01-01T00:00:00Z); an interval is two of them, or one and `..`, "
            "joined by `/`.")
    for path in ("/data/search", "/data/collections", f"/data/collections/{collection}/items",
                 f"/data/catalogs/{root}/_search"):
        for value in (OFFSET_OF_A_DAY, f"{OFFSET_OF_A_DAY}/..", f"../{OFFSET_OF_A_DAY}"):
            r = await anon.get(path, params={"datetime": value})
            assert (r.status_code, r.json()) == (
                400, {"code": "BadRequest", "description": said}), (path, value)
    out_of_range = {"code": "InvalidRequest", "description": (
        "A date, duration or number in the request is out of the range this service can "
        "store or compare.")}
    item = make_item(unique("late_"), collection_id=collection)
    item["properties"]["datetime"] = "9999-12-31T23:59:59-23:59"
    r = await alice_data.post(f"/data/collections/{collection}/items", json=item)
    assert (r.status_code, r.json()) == (400, out_of_range)
    r = await anon.post("/data/search", json={"datetime": "9999-12-31T23:59:59-23:59"})
    assert (r.status_code, r.json()) == (400, out_of_range)
    r = await anon.get(f"/data/collections/{collection}/items",
                       params={"datetime": "2021-01-01T00:00:00Z/.."})
    assert r.status_code == 200  # a valid interval still goes to stock as ever


def _concrete(path: str) -> str:
    """An OpenAPI path with sample values for its parameters."""
    return path.replace("{path}", "a/b").replace("{path:path}", "a/b") \
        .replace("{", "x").replace("}", "")


async def test_options_and_405_name_every_method_of_the_openapi_documents(anon) -> None:
    """`Allow` names what the OpenAPI document says a path takes, not just the methods of
    the first route Starlette matched."""
    for prefix, document in (("", "/data/api"), ("/processes", "/processes/api")):
        paths = (await anon.get(document)).json()["paths"]
        for path, operations in paths.items():
            documented = {m.upper() for m in operations if m in (
                "get", "post", "put", "patch", "delete")}
            r = await anon.options(prefix + _concrete(path))
            assert r.status_code == 204, (path, r.status_code)
            allowed = set(r.headers["allow"].split(", "))
            assert documented | {"OPTIONS"} <= allowed, (path, documented - allowed)
    r = await anon.patch("/data/collections/c/items")
    assert r.status_code == 405
    assert r.headers["allow"] == "GET, HEAD, OPTIONS, POST"


async def test_patches_are_bounded_like_every_write(alice_data: httpx.AsyncClient, anon,
                                                    collection: str) -> None:
    """A merge patch 254 levels deep was a 500 (and 252 were stored); NaN was stored as
    null: a PATCH is bounded as a POST is, and nothing changes."""
    r = await alice_data.post(f"/data/collections/{collection}/items", json=make_item("p"))
    assert r.status_code == 201, r.text
    url = f"/data/collections/{collection}/items/p"
    before = (await anon.get(url)).json()
    merge = {"Content-Type": "application/merge-patch+json"}
    r = await alice_data.patch(url, json={"properties": nested(254)}, headers=merge)
    assert (r.status_code, r.json()) == (400, {
        "code": "BadRequest",
        "description": f"The request body nests deeper than {MAX_JSON_DEPTH} levels."})
    r = await alice_data.patch(url, content='{"properties": {"x": NaN}}', headers=merge)
    assert (r.status_code, r.json()) == (400, {
        "code": "BadRequest", "description": "NaN is not a JSON number: numbers must be finite"})
    assert (await anon.get(url)).json() == before
    r = await alice_data.patch(url, json=[{"op": "add", "path": "/properties/x", "value": 1}],
                               headers={"Content-Type": "application/json-patch+json"})
    assert r.status_code == 200 and r.json()["properties"]["x"] == 1, r.text


async def test_process_inputs_are_bounded(alice_processes: httpx.AsyncClient) -> None:
    """`processInputs` 900 levels deep was a plain-text 500; NaN was stored as null."""
    jobs = (await alice_processes.get("/processes/jobs", params={"limit": 1000})).json()
    deep = '{"processInputs": {"message": "x", "object": ' + '{"a": ' * 900 + "1" \
        + "}" * 900 + "}}"
    nan = '{"processInputs": {"message": "x", "object": {"v": NaN}}}'
    # an integer beyond 64 bits failed as the job was stored (a 500); 1e400 became null
    huge = '{"processInputs": {"message": "x", "object": {"v": 18446744073709551616}}}'
    infinite = '{"processInputs": {"message": "x", "object": {"v": -1e400}}}'
    for body, detail in ((deep, f"The request body nests deeper than {MAX_JSON_DEPTH} levels."),
                         (nan, "NaN is not a JSON number: numbers must be finite"),
                         (huge, BEYOND_64_BITS.format("18446744073709551616")),
                         (infinite, "-1e400 is beyond what a number may be: numbers must be "
                                    "finite (at most about 1.8e308)")):
        r = await alice_processes.post("/processes/processes/echo/execution", content=body,
                                       headers={"Content-Type": "application/json"})
        assert (r.status_code, r.json()) == (400, {
            "type": "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/invalid-input",
            "title": "Bad Request", "status": 400, "detail": detail})
    after = (await alice_processes.get("/processes/jobs", params={"limit": 1000})).json()
    # no job made, by id: another test's job may change state between the two lists
    assert [j["jobID"] for j in after["jobs"]] == [j["jobID"] for j in jobs["jobs"]]


async def test_a_null_body_is_no_object(alice_data: httpx.AsyncClient,
                                        alice_processes: httpx.AsyncClient) -> None:
    """`null` was told it "nests deeper than 64 levels"."""
    for client, url, error in (
            (alice_data, "/data/search", {"code": "BadRequest",
                                          "description": "The request body must be a JSON "
                                                         "object."}),
            (alice_processes, "/processes/processes/echo/execution", {
                "type": "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/"
                        "invalid-input", "title": "Bad Request", "status": 400,
                "detail": "The request body must be a JSON object."})):
        r = await client.post(url, content="null", headers={"Content-Type": "application/json"})
        assert (r.status_code, r.json()) == (400, error)
