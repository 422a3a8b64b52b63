"""Bad input: a 4xx with the STAC error body (`code`, `description`), never a 500."""

import json
from typing import Any

import httpx
import pytest

from process_api.api.errors import OGC
from tests.support.stac import make_collection, make_item, unique


def assert_stac_error(r: httpx.Response, status: int) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) >= {"code", "description"}
    assert body["code"] and body["description"]


async def test_malformed_json(alice_data: httpx.AsyncClient, collection: str) -> None:
    r = await alice_data.post(f"/data/collections/{collection}/items", content=b"{bad",
                          headers={"Content-Type": "application/json"})
    assert_stac_error(r, 400)
    assert "{bad" not in r.text  # the body is not echoed back


@pytest.mark.parametrize("mutate", [
    lambda i: i.pop("geometry"),
    lambda i: i.pop("properties"),
    lambda i: i.update(type="Nope"),
    lambda i: i["properties"].update(datetime="yesterday"),
    lambda i: i.update(geometry={"type": "Polygon", "coordinates": "x"}),
])
async def test_invalid_item(alice_data: httpx.AsyncClient, collection: str, mutate) -> None:
    item = make_item("bad")
    mutate(item)
    r = await alice_data.post(f"/data/collections/{collection}/items", json=item)
    assert_stac_error(r, 400)
    assert (await alice_data.get(f"/data/collections/{collection}/items/bad")).status_code == 404


async def test_item_naming_another_collection(alice_data: httpx.AsyncClient, collection: str):
    r = await alice_data.post(f"/data/collections/{collection}/items",
                          json=make_item("x", collection_id="someone_else-var"))
    assert_stac_error(r, 400)


async def test_unknown_collection_and_item(alice_data: httpx.AsyncClient, collection: str):
    assert_stac_error(await alice_data.get("/data/collections/nope-nope"), 404)
    assert_stac_error(await alice_data.get("/data/collections/nope-nope/items"), 404)
    assert_stac_error(await alice_data.get("/data/collections/nope-nope/items",
                                       params={"bbox": "0,0,1,1"}), 404)
    empty = await alice_data.get(f"/data/collections/{collection}/items")  # exists, no items
    assert empty.status_code == 200 and empty.json()["features"] == []
    assert_stac_error(await alice_data.get(f"/data/collections/{collection}/items/nope"), 404)
    assert_stac_error(await alice_data.post("/data/collections/nope-nope/items",
                                        json=make_item("x")), 404)


@pytest.mark.parametrize("query", [
    "bbox=1,2,3", "bbox=a,b,c,d", "datetime=notadate", "datetime=2021-01-02/2020-01-01",
    "limit=-1", "limit=abc", "limit=0",
])
async def test_bad_search_parameters(alice_data: httpx.AsyncClient, query: str) -> None:
    assert_stac_error(await alice_data.get(f"/data/search?{query}"), 400)


@pytest.mark.parametrize("query", ["bbox=1,2,3", "datetime=notadate", "limit=-5"])
async def test_bad_items_parameters(alice_data: httpx.AsyncClient, collection: str, query: str):
    assert_stac_error(await alice_data.get(f"/data/collections/{collection}/items?{query}"), 400)


@pytest.mark.parametrize("intersects", [
    '{"type": "PolyhedralSurface", "coordinates": [[[[0,0,0],[0,1,0],[1,1,0],[0,0,0]]]]}',
    '{"type": "Polygon", "coordinates": "nope"}',
    "{not json",
])
async def test_bad_intersects(alice_data: httpx.AsyncClient, intersects: str) -> None:
    assert_stac_error(await alice_data.get("/data/search", params={"intersects": intersects}), 400)


async def test_bad_intersects_post(alice_data: httpx.AsyncClient) -> None:
    body = {"intersects": {"type": "PolyhedralSurface",
                           "coordinates": [[[[0, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 0]]]]}}
    assert_stac_error(await alice_data.post("/data/search", json=body), 400)


async def test_collection_without_stac_version_gets_one(admin_data: httpx.AsyncClient) -> None:
    body = make_collection(unique("test_conv-noversion_"))
    del body["stac_version"]
    assert (await admin_data.post("/data/collections", json=body)).status_code == 201
    stored = (await admin_data.get(f"/data/collections/{body['id']}")).json()
    assert stored["stac_version"] == "1.0.0"


@pytest.mark.parametrize("body", ["[null, null]", "3", '"text"', "null"])
async def test_search_body_must_be_an_object(alice_data: httpx.AsyncClient, body: str) -> None:
    r = await alice_data.post("/data/search", content=body,
                          headers={"Content-Type": "application/json"})
    assert_stac_error(r, 400)


async def test_unicode_item_id_location(alice_data: httpx.AsyncClient, collection: str) -> None:
    r = await alice_data.post(f"/data/collections/{collection}/items", json=make_item("été-🌊"))
    assert r.status_code == 201, r.text
    assert r.headers["Location"].endswith("/items/%C3%A9t%C3%A9-%F0%9F%8C%8A")
    assert (await alice_data.get(r.headers["Location"])).json()["id"] == "été-🌊"


async def test_put_collection_without_body(admin_data: httpx.AsyncClient, collection: str) -> None:
    assert_stac_error(await admin_data.put(f"/data/collections/{collection}"), 400)


async def test_catalog_with_huge_numbers(alice_data: httpx.AsyncClient) -> None:
    body = {"id": unique("big"), "type": "Catalog", "description": "d",
            "extra": {"n": 2**80, "x": 1e308}}
    r = await alice_data.post("/data/catalogs", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["extra"]["n"] == 2**80


async def test_processes_errors_keep_their_format(anon: httpx.AsyncClient) -> None:
    r = await anon.get("/processes/jobs/%0A%5D")  # no route matches a newline in a job id
    assert r.status_code == 404
    assert r.json() == {"type": OGC + "not-found", "title": "Not Found", "status": 404,
                        "detail": "Not Found"}


async def test_unappliable_patches(admin_data: httpx.AsyncClient, alice_data: httpx.AsyncClient,
                                   collection: str) -> None:
    ops = [{"op": "remove", "path": "/nowhere/at/all"}]
    headers = {"Content-Type": "application/json-patch+json"}
    r = await admin_data.patch(f"/data/collections/{collection}", json=ops, headers=headers)
    assert_stac_error(r, 400)
    assert (await alice_data.post(f"/data/collections/{collection}/items",
                              json=make_item("p"))).status_code == 201
    r = await alice_data.patch(f"/data/collections/{collection}/items/p", headers=headers,
                           json=[{"op": "test", "path": "/properties/datetime", "value": 1}])
    assert_stac_error(r, 400)


async def test_integers_beyond_64_bits_in_a_search_body(alice_data: httpx.AsyncClient,
                                                        collection: str) -> None:
    """orjson encodes 64-bit integers only: an unknown field copied into the `next` link
    must not turn into a 500."""
    for n in range(2):
        r = await alice_data.post(f"/data/collections/{collection}/items",
                                  json=make_item(f"big{n}"))
        assert r.status_code == 201, r.text
    r = await alice_data.post("/data/search", json={"collections": [collection], "limit": 1,
                                                    "huge": 2**80})
    assert r.status_code == 200, r.text
    [next_link] = [link for link in r.json()["links"] if link["rel"] == "next"]
    assert next_link["body"]["huge"] == 2**80


async def test_integers_beyond_64_bits_in_an_item(alice_data: httpx.AsyncClient,
                                                  collection: str) -> None:
    """Stored and served (PostgreSQL keeps the number; it is read back as a float)."""
    item = make_item("big-property")
    item["properties"]["count"] = 2**80
    r = await alice_data.post(f"/data/collections/{collection}/items", json=item)
    assert r.status_code == 201, r.text
    assert r.json()["properties"]["count"] == 2**80
    served = await alice_data.get(r.headers["Location"])
    assert served.status_code == 200
    assert served.json()["properties"]["count"] == float(2**80)


BOWTIE = {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]}
FAR = {"type": "Point", "coordinates": [1e300, 0]}


@pytest.mark.parametrize(("geometry", "why"), [
    (BOWTIE, "Self-intersection[0.5 0.5]"),
    (FAR, "the position (1e+300, 0) is outside longitude -180..180 and latitude -90..90 "
          "(WGS 84, RFC 7946)"),
])
async def test_invalid_geometries_are_400_on_every_write(alice_data: httpx.AsyncClient,
                                                         collection: str, geometry: dict,
                                                         why: str) -> None:
    said = f"Item 'g' has an invalid geometry: {why}."
    items = f"/data/collections/{collection}/items"
    r = await alice_data.post(items, json={**make_item("g"), "geometry": geometry})
    assert (r.status_code, r.json()) == (400, {"code": "BadRequest", "description": said})
    r = await alice_data.post(f"/data/collections/{collection}/bulk_items", json={
        "items": {"g": {**make_item("g"), "geometry": geometry}}, "method": "insert"})
    assert r.status_code == 200 and r.json()["errors"] == [{"id": "g", "msg": said}], r.text
    assert (await alice_data.post(items, json=make_item("g"))).status_code == 201
    for patch, media in (({"geometry": geometry}, "application/merge-patch+json"),
                         ([{"op": "replace", "path": "/geometry", "value": geometry}],
                          "application/json-patch+json")):
        r = await alice_data.patch(f"{items}/g", json=patch, headers={"Content-Type": media})
        assert (r.status_code, r.json()) == (400, {"code": "BadRequest", "description": said})
    r = await alice_data.put(f"{items}/g", json={**make_item("g"), "geometry": geometry})
    assert (r.status_code, r.json()) == (400, {"code": "BadRequest", "description": said})
    assert (await alice_data.get(f"{items}/g")).json()["geometry"] == \
        make_item("g")["geometry"]


@pytest.mark.parametrize("href", ["javascript:alert(1)", "JavaScript:alert(1)",
                                  " java\tscript:alert(1)", "data:text/html,<b>x</b>",
                                  "file:///etc/passwd", "vbscript:x"])
async def test_hrefs_a_browser_should_not_follow_are_400(
        alice_data: httpx.AsyncClient, admin_data: httpx.AsyncClient, collection: str,
        href: str) -> None:
    scheme = href.replace("\t", "").strip().split(":")[0].lower()
    refused = (f"a `{scheme}:` address is not allowed (http(s), object storage such as s3://, "
               "or a relative address).")
    items = f"/data/collections/{collection}/items"
    r = await alice_data.post(items, json=make_item("h", data=href))
    assert (r.status_code, r.json()["description"]) == (
        400, f"Item 'h': assets.data.href: {refused}")
    r = await alice_data.post(items, json={**make_item("h"), "links": [
        {"rel": "license", "href": href}]})
    assert (r.status_code, r.json()["description"]) == (
        400, f"Item 'h': links.0.href: {refused}")
    body = {**make_collection(unique("test_conv-href_")),
            "providers": [{"name": "p", "url": href}]}
    r = await admin_data.post("/data/collections", json=body)
    assert (r.status_code, r.json()["description"]) == (
        400, f"Collection {body['id']}: providers.0.url: {refused}")
    catalog = {"id": unique("href-"), "type": "Catalog", "description": "d",
               "links": [{"rel": "license", "href": href}]}
    r = await alice_data.post("/data/catalogs", json=catalog)
    assert (r.status_code, r.json()["description"]) == (
        400, f"Catalog {catalog['id']}: links.0.href: {refused}")
    assert (await alice_data.get(f"/data/catalogs/{catalog['id']}")).status_code == 404


async def test_object_storage_and_relative_hrefs_are_kept(alice_data: httpx.AsyncClient,
                                                          collection: str) -> None:
    item = make_item("kept", data="s3://bucket/a.zarr", other="data/b.nc")
    item["links"] = [{"rel": "license", "href": "../LICENSE"}]
    r = await alice_data.post(f"/data/collections/{collection}/items", json=item)
    assert r.status_code == 201, r.text
    assert r.json()["assets"]["data"]["href"] == "s3://bucket/a.zarr"


@pytest.mark.parametrize("fields", [",", "+", "-,,", " "])
async def test_empty_field_names_are_no_fields(anon: httpx.AsyncClient, fields: str) -> None:
    """`fields=,` was a 500 (stock read the first character of an empty name)."""
    r = await anon.get("/data/search", params={"fields": fields, "limit": 1})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(("filter_text", "value"), [
    ("datetime > TIMESTAMP('nonsense')", "nonsense"),
    ("datetime = TIMESTAMP('2021-13-45T00:00:00Z')", "2021-13-45T00:00:00Z"),
    ("T_INTERSECTS(datetime, INTERVAL('2021-01-01T00:00:00Z', 'bad'))", "bad")])
async def test_a_filters_bad_date_time_is_said_in_words(alice_data: httpx.AsyncClient,
                                                        filter_text: str, value: str) -> None:
    """It said "Datetime parameter None is invalid." (a request with no datetime), or the
    database's own text."""
    for r in (await alice_data.get("/data/search", params={"filter": filter_text,
                                                          "filter-lang": "cql2-text"}),
              await alice_data.get("/data/aggregate", params={
                  "filter": filter_text, "filter-lang": "cql2-text",
                  "aggregations": "total_count"})):
        assert (r.status_code, r.json()) == (400, {
            "code": "InvalidQueryParameter",
            "description": f"filter: {value!r} is not an RFC 3339 date-time with every field "
                           "in range (e.g. 2020-01-01T00:00:00Z); an interval is two of them, "
                           "or one and `..`, joined by `/`."}), r.text


async def test_a_search_refused_says_why_in_the_same_words_for_get_and_post(
        alice_data: httpx.AsyncClient) -> None:
    """What pydantic said, without its report's headers and links (GET's came whole), and
    where as the input names it (not the tuple shapes a bbox may take)."""
    # (a query's numbers are read as decimals, a body's as written)
    got = await alice_data.get("/data/search?bbox=10,10,0,0")
    posted = await alice_data.post("/data/search", json={"bbox": [10.0, 10.0, 0.0, 0.0]})
    says = "bbox: Maximum latitude (0.0) must be greater than minimum latitude  (10.0)"
    assert [(r.status_code, r.json()) for r in (got, posted)] == [
        (400, {"code": "BadRequest", "description": says}),
        (400, {"code": "InvalidRequest", "description": says})]
    three = await alice_data.post("/data/search", json={"bbox": [0, 0, 1]})
    assert (three.status_code, three.json()) == (400, {
        "code": "InvalidRequest",
        "description": "bbox.3: Field required; bbox.4: Field required; bbox.5: Field required"})


@pytest.mark.parametrize(("path", "headers", "content"), [
    ("/data/search", {"Content-Type": "text/plain"}, b'{"limit": 1}'),
    ("/data/search", {"Content-Type": "application/x-www-form-urlencoded"}, b"limit=1"),
    ("/data/aggregate", {"Content-Type": "text/plain"}, b'{"aggregations": ["total_count"]}'),
    ("/data/search", {}, b'{"limit": 1}'),
])
async def test_a_body_that_is_not_json_is_refused(
        alice_data: httpx.AsyncClient, path: str, headers: dict, content: bytes) -> None:
    r = await alice_data.post(path, content=content, headers=headers)
    assert (r.status_code, r.json()) == (415, {
        "code": "UnsupportedMediaType",
        "description": "The request body must be JSON, sent with "
                       "`Content-Type: application/json`."})
    json_typed = await alice_data.post(path, content=content.replace(b"limit=1", b"{}"),
                                       headers={"Content-Type": "application/json; charset=utf-8"})
    assert json_typed.status_code == 200, json_typed.text


async def test_an_interval_that_ends_before_it_starts_says_so(
        alice_data: httpx.AsyncClient, collection: str) -> None:
    for path in ("/data/search", f"/data/collections/{collection}/items"):
        r = await alice_data.get(path, params={
            "datetime": "2021-01-01T00:00:00Z/2020-01-01T00:00:00Z"})
        assert (r.status_code, r.json()) == (400, {
            "code": "BadRequest",
            "description": "datetime: the interval's start (2021-01-01T00:00:00Z) is after its "
                           "end (2020-01-01T00:00:00Z)."})



OFF_THE_WORLD = {"code": "InvalidQueryParameter", "description": (
    "intersects: the coordinates must be within (-180, -90, 180, 90) (longitude, latitude "
    "in degrees).")}


@pytest.mark.parametrize("geometry", [
    {"type": "Point", "coordinates": [500, 10]},
    {"type": "LineString", "coordinates": [[0, 0], [10, 100]]},
    {"type": "GeometryCollection", "geometries": [
        {"type": "Point", "coordinates": [0, 0]}, {"type": "LineString",
                                                   "coordinates": [[0, 0], [-181, 0]]}]},
])
async def test_intersects_off_the_world(alice_data: httpx.AsyncClient, geometry) -> None:
    """A place off the world's longitudes and latitudes is refused, as a bbox's is (it
    found nothing, 200)."""
    got = await alice_data.get("/data/search", params={"intersects": json.dumps(geometry)})
    posted = await alice_data.post("/data/search", json={"intersects": geometry})
    assert (got.status_code, got.json()) == (400, OFF_THE_WORLD)
    assert (posted.status_code, posted.json()) == (400, OFF_THE_WORLD)


async def test_filter_crs(alice_data: httpx.AsyncClient) -> None:
    """Filters are read in CRS84 only: another `filter-crs` (EPSG:4326 reads latitude
    first) is a 400, not a filter read in the wrong axes; CRS84 named is read."""
    refused = {"code": "InvalidQueryParameter", "description": (
        "filter-crs: this service reads filters in "
        "http://www.opengis.net/def/crs/OGC/1.3/CRS84 (longitude, latitude in degrees) only.")}
    text = "s_intersects(geometry, POINT(1 1))"
    cql2 = {"op": "s_intersects", "args": [{"property": "geometry"},
                                           {"type": "Point", "coordinates": [1, 1]}]}
    for crs, status in [("http://www.opengis.net/def/crs/EPSG/0/4326", 400),
                        ("http://www.opengis.net/def/crs/OGC/1.3/CRS84", 200)]:
        got = await alice_data.get("/data/search", params={
            "filter": text, "filter-lang": "cql2-text", "filter-crs": crs})
        posted = await alice_data.post("/data/search", json={"filter": cql2,
                                                             "filter-crs": crs})
        assert (got.status_code, posted.status_code) == (status, status), got.text
        if status == 400:
            assert got.json() == posted.json() == refused


@pytest.mark.parametrize(("bbox", "description"), [
    ("0,0,200,10", "bbox: Bounding box must be within (-180, -90, 180, 90)"),
    ("0,10,1,0", "bbox: Maximum latitude (0.0) must be greater than minimum latitude (10.0)"),
])
async def test_collections_bbox_off_the_world(alice_data: httpx.AsyncClient, bbox: str,
                                              description: str) -> None:
    """The collections listing's bbox is checked as a search's (it listed nothing, 200)."""
    r = await alice_data.get("/data/collections", params={"bbox": bbox})
    assert (r.status_code, r.json()) == (400, {"code": "InvalidQueryParameter",
                                               "description": description})


async def test_a_bbox_with_heights_is_searched_by_its_footprint(
        alice_data: httpx.AsyncClient, collection: str) -> None:
    """Six numbers (west, south, low, east, north, high), as STAC allows: every search
    answered 500 (the database cannot intersect the solid they made); now the footprint
    is searched, as footprints are stored."""
    for name, x in (("in", 10.0), ("out", 50.0)):
        r = await alice_data.post(f"/data/collections/{collection}/items",
                                  json=make_item(name, x=x))
        assert r.status_code == 201, r.text
    flat, high = "5,-1,20,2", "5,-1,-100,20,2,100"
    for path in ("/data/search", f"/data/collections/{collection}/items"):
        got = {}
        for bbox in (flat, high):
            r = await alice_data.get(path, params={"bbox": bbox, "collections": collection})
            assert r.status_code == 200, r.text
            got[bbox] = [f["id"] for f in r.json()["features"]]
        assert got == {flat: ["in"], high: ["in"]}, path
    r = await alice_data.post("/data/search", json={
        "collections": [collection], "bbox": [5, -1, -100, 20, 2, 100]})
    assert (r.status_code, [f["id"] for f in r.json()["features"]]) == (200, ["in"])
    r = await alice_data.get("/data/aggregate", params={
        "collections": collection, "bbox": high, "aggregations": "total_count"})
    assert (r.status_code, r.json()["aggregations"][0]["value"]) == (200, 1)
    # the listing (paged, other tests' collections among them) the flat box's
    listed = [await alice_data.get("/data/collections", params={"bbox": bbox, "limit": 100})
              for bbox in (flat, high)]
    assert [r.status_code for r in listed] == [200, 200]
    flat_ids, high_ids = ([c["id"] for c in r.json()["collections"]] for r in listed)
    assert flat_ids and high_ids == flat_ids


@pytest.mark.parametrize(("change", "description"), [
    ({"properties": {"datetime": 12345}},
     "properties.datetime: an RFC 3339 date and time as text (such as "
     "2021-01-01T00:00:00Z), not 12345"),
    ({"properties": {"datetime": "2021-01-01T00:00:00Z", "updated": 1.5}},
     "properties.updated: an RFC 3339 date and time as text (such as "
     "2021-01-01T00:00:00Z), not 1.5"),
    ({"properties": {"datetime": "12345"}},
     "properties.datetime: an RFC 3339 date and time as text (such as "
     "2021-01-01T00:00:00Z), not \"12345\""),
    ({"properties": {"datetime": True}},
     "properties.datetime: an RFC 3339 date and time as text (such as "
     "2021-01-01T00:00:00Z), not true"),
    ({"bbox": [1.2e59, 0, 1, 1]},
     "bbox: longitudes within -180 to 180, latitudes within -90 to 90 (WGS 84 degrees, as "
     "the geometry's)"),
])
async def test_an_item_keeps_what_it_says(alice_data: httpx.AsyncClient, collection: str,
                                          change: dict, description: str) -> None:
    """A number as `datetime` (or text of digits) was stored as seconds since 1970 (201), a
    bbox of 1.2e59 as sent: each a 400 now, and nothing stored (POST, PUT)."""
    url = f"/data/collections/{collection}/items"
    item = {**make_item("kept"), **change}
    r = await alice_data.post(url, json=item)
    # the body is read as what its `type` says: an item's refusal only
    assert (r.status_code, r.json()) == (400, {"code": "InvalidRequest",
                                               "description": f"Feature: {description}"}), r.text
    # in a FeatureCollection, where among its features
    r = await alice_data.post(url, json={"type": "FeatureCollection",
                                         "features": [make_item("fine"), item]})
    assert (r.status_code, r.json()) == (400, {"code": "InvalidRequest", "description": (
        f"FeatureCollection.features.1: {description}")}), r.text
    assert (await alice_data.get(f"{url}/fine")).status_code == 404
    assert (await alice_data.get(f"{url}/kept")).status_code == 404
    assert (await alice_data.post(url, json=make_item("kept"))).status_code == 201
    r = await alice_data.put(f"{url}/kept", json=item)
    assert r.status_code == 400, r.text
    stored = (await alice_data.get(f"{url}/kept")).json()
    assert stored["properties"]["datetime"] == "2021-01-01T00:00:00Z"


@pytest.mark.parametrize(("body", "description"), [
    ('{"type": "Feature",', "body: not valid JSON (Expecting property name enclosed in "
                            "double quotes, at character 19)"),
    ("nul", "body: not valid JSON (Expecting value, at character 0)"),
])
async def test_a_body_that_is_not_json_says_where(alice_data: httpx.AsyncClient,
                                                  collection: str, body: str,
                                                  description: str) -> None:
    """Broken JSON was "1: JSON decode error" (FastAPI's words, its offset as a field)."""
    r = await alice_data.post(f"/data/collections/{collection}/items", content=body,
                              headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (400, {"code": "InvalidRequest",
                                               "description": description}), r.text


async def test_an_empty_body_says_so(alice_data: httpx.AsyncClient, collection: str) -> None:
    """It was "Invalid item: body: Input should be a valid dictionary or instance of
    ItemIn" (pydantic's words, a class of ours); `null` says it is no object."""
    url = f"/data/collections/{collection}/items"
    json_type = {"Content-Type": "application/json"}
    r = await alice_data.post(url, content=b"", headers=json_type)
    assert (r.status_code, r.json()) == (400, {"code": "BadRequest", "description": (
        "The request body is empty: it must be a JSON object (an item, or a FeatureCollection "
        "of items to create at once).")})
    r = await alice_data.post(url, content=b"null", headers=json_type)
    assert (r.status_code, r.json()) == (400, {
        "code": "BadRequest", "description": "The request body must be a JSON object."})


@pytest.mark.parametrize("body", [{"type": "Catalog", "id": "x"}, {"id": "no-type"}])
async def test_a_posted_body_says_what_it_is(alice_data: httpx.AsyncClient, collection: str,
                                             body: Any) -> None:
    """Neither an item nor items (by its `type`): a 400 naming the two it may be."""
    r = await alice_data.post(f"/data/collections/{collection}/items", json=body)
    assert (r.status_code, r.json()) == (400, {"code": "InvalidRequest", "description": (
        "body: type: Feature (an item) or FeatureCollection (items to create at once)")})
