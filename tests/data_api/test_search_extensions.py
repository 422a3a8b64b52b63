"""Search behaviour stock stac-fastapi-pgstac lacks or gets wrong, found by the validators:
every Query operator, single-string id lists, GeoJSON media type with `fields`, unknown
query parameters on the features endpoints."""

from __future__ import annotations

import json

import httpx
from pydantic import BaseModel
from stac_fastapi.api.models import create_post_request_model
from stac_fastapi.extensions import SearchFilterExtension
from stac_fastapi.pgstac.types.search import PgstacSearch

from stac_ext.data_api.search.owner import OwnerSearchExtension, fold_owner
from stac_ext.data_api.search.query_operators import FullQueryExtension, fold_query
from tests.support.stac import make_item


async def _seed(client: httpx.AsyncClient, collection: str) -> None:
    for n, name in enumerate(["north_100%", "north_2", "south_3", "sou\\th"], start=1):
        item = make_item(f"q{n}", collection_id=collection, x=n)
        item["properties"]["station"] = name
        r = await client.post(f"/data/collections/{collection}/items", json=item)
        assert r.status_code == 201, r.text


async def _ids(client: httpx.AsyncClient, collection: str, query: dict) -> list[str]:
    get = await client.get("/data/search", params={"collections": collection,
                                                   "query": json.dumps(query)})
    post = await client.post("/data/search", json={"collections": [collection],
                                                   "query": query})
    assert get.status_code == post.status_code == 200, (get.text, post.text)
    got, posted = (sorted(f["id"] for f in r.json()["features"]) for r in (get, post))
    assert got == posted
    return got


async def test_every_query_operator(alice_data: httpx.AsyncClient, collection: str) -> None:
    await _seed(alice_data, collection)
    assert await _ids(alice_data, collection, {"station": {"startsWith": "north"}}) == ["q1", "q2"]
    # wildcards and the escape character are literal text
    assert await _ids(alice_data, collection, {"station": {"endsWith": "100%"}}) == ["q1"]
    assert await _ids(alice_data, collection, {"station": {"contains": "_"}}) == ["q1", "q2", "q3"]
    assert await _ids(alice_data, collection, {"station": {"contains": "u\\t"}}) == ["q4"]
    assert await _ids(alice_data, collection, {"station": {"in": ["south_3", "north_2"]}}) \
        == ["q2", "q3"]
    assert await _ids(alice_data, collection, {"station": {"startsWith": "south",
                                                       "neq": "south_3"}}) == []
    assert await _ids(alice_data, collection, {"station": {"eq": "north_2"}}) == ["q2"]
    bad = await alice_data.post("/data/search", json={"query": {"station": {"like": "x"}}})
    assert bad.status_code == 400


async def test_a_post_search_takes_a_text_filter(alice_data: httpx.AsyncClient,
                                                 collection: str) -> None:
    """A POST body's filter was CQL2-JSON only: pystac-client, which posts the text it is
    given with `filter-lang: cql2-text`, was answered 400 (search, aggregate, a catalog's
    search)."""
    await _seed(alice_data, collection)
    text = "station LIKE 'north%' AND id <> 'q2'"
    as_json = {"op": "and", "args": [
        {"op": "like", "args": [{"property": "station"}, "north%"]},
        {"op": "<>", "args": [{"property": "id"}, "q2"]}]}
    found = []
    for body in ({"filter": text, "filter-lang": "cql2-text"}, {"filter": as_json},
                 {"filter": as_json, "filter-lang": "cql2-json"}):
        r = await alice_data.post("/data/search", json={"collections": [collection], **body})
        assert r.status_code == 200, r.text
        found.append(sorted(f["id"] for f in r.json()["features"]))
    assert found == [["q1"]] * 3
    r = await alice_data.post("/data/aggregate", json={
        "collections": [collection], "filter": text, "filter-lang": "cql2-text",
        "aggregations": ["total_count"]})
    assert (r.status_code, r.json()["aggregations"][0]["value"]) == (200, 1), r.text
    says = ("filter: CQL2 text goes with filter-lang cql2-text, a JSON object with cql2-json "
            "(the default).")
    for body in ({"filter": text}, {"filter": as_json, "filter-lang": "cql2-text"}):
        r = await alice_data.post("/data/search", json=body)
        assert (r.status_code, r.json()) == (
            400, {"code": "InvalidQueryParameter", "description": says}), r.text
    r = await alice_data.post("/data/search", json={"filter": "station LIKE",
                                                    "filter-lang": "cql2-text"})
    assert r.status_code == 400 and r.json()["description"].startswith("Invalid filter: ")


async def test_single_string_lists_and_geojson_with_fields(alice_data, collection) -> None:
    await _seed(alice_data, collection)
    r = await alice_data.post("/data/search", json={"collections": collection, "ids": "q2"})
    assert r.status_code == 200 and [f["id"] for f in r.json()["features"]] == ["q2"]
    for answer in (await alice_data.post("/data/search", json={
                       "collections": [collection], "fields": {"include": ["id"]}}),
                   await alice_data.get(f"/data/collections/{collection}/items",
                                    params={"fields": "id"})):
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/geo+json"


async def test_unknown_query_parameters_on_features(alice_data, collection) -> None:
    await _seed(alice_data, collection)
    for url in (f"/data/collections/{collection}/items?ooga=booga",
                f"/data/collections/{collection}/items/q1?ooga=booga"):
        r = await alice_data.get(url)
        assert r.status_code == 400 and "ooga" in r.json()["description"]
    ok = await alice_data.get(f"/data/collections/{collection}/items",
                          params={"limit": 2, "bbox": "0,0,10,10", "sortby": "-datetime",
                                  "filter-lang": "cql2-text", "filter": "station = 'north_2'"})
    assert ok.status_code == 200 and [f["id"] for f in ok.json()["features"]] == ["q2"]
    # pystac-client repeats the collection as `collections`: tolerated
    again = await alice_data.get(f"/data/collections/{collection}/items",
                             params={"collections": collection, "limit": 1})
    assert again.status_code == 200 and len(again.json()["features"]) == 1


# -- unit tests of the folding (pure functions) ----------------------------------------

#: POST /search's body model as the service builds it (owner, Query, filter extensions).
SearchBody = create_post_request_model(
    [OwnerSearchExtension(), FullQueryExtension(), SearchFilterExtension()],
    base_model=PgstacSearch)


def _search(**fields: object) -> BaseModel:
    return SearchBody(**fields)


def test_fold_query_keeps_operators_pgstac_knows() -> None:
    search = _search(query={"station": {"eq": "a"}, "n": {"gt": 1}})
    assert fold_query(search) is search


def test_fold_query_turns_every_operator_into_cql2_with_escaped_wildcards() -> None:
    folded = fold_query(_search(query={"s": {"startsWith": "a%_\\", "endsWith": "z"},
                                       "k": {"in": "one"}, "n": {"neq": 3}}))
    assert folded.query is None
    assert folded.filter_lang == "cql2-json"
    assert folded.filter_expr == {"op": "and", "args": [
        {"op": "like", "args": [{"property": "s"}, "a\\%\\_\\\\%"]},
        {"op": "like", "args": [{"property": "s"}, "%z"]},
        {"op": "in", "args": [{"property": "k"}, ["one"]]},
        {"op": "<>", "args": [{"property": "n"}, 3]},
    ]}


def test_fold_owner_ands_with_the_clients_filter() -> None:
    own = {"op": "=", "args": [{"property": "owner"}, "alice"]}
    mine = {"op": ">", "args": [{"property": "n"}, 1]}
    search = _search(filter=mine, filter_lang="cql2-json", owner="alice")
    folded = fold_owner(search)
    assert folded.filter_expr == {"op": "and", "args": [mine, own]}


def test_fold_owner_joins_a_query_when_there_is_no_filter() -> None:
    search = _search(query={"n": {"gt": 1}}, owner="bob")
    folded = fold_owner(search)
    assert folded.query == {"n": {"gt": 1}, "owner": {"eq": "bob"}}
    assert folded.filter_expr is None


async def test_dates_boxes_and_instants_in_filters(alice_data: httpx.AsyncClient,
                                                   collection: str) -> None:
    """A DATE literal was read as text: every comparison false, no items, no error; a BBOX
    literal was "not a GeoJSON geometry or a bbox"; `created` compared with a TIMESTAMP
    was the database's "operator does not exist". Each now finds what it says, in CQL2
    text (GET) and JSON (POST) alike."""
    for n in range(1, 5):  # d1..d4: 2021-01-01..04, x = 10n..10n+1, created now
        item = make_item(f"d{n}", collection_id=collection, x=10 * n, day=n)
        r = await alice_data.post(f"/data/collections/{collection}/items", json=item)
        assert r.status_code == 201, r.text
    asked = [
        ("datetime > DATE('2021-01-02')", {"op": ">", "args": [
            {"property": "datetime"}, {"date": "2021-01-02"}]}, ["d3", "d4"]),
        ("datetime = DATE('2021-01-02')", {"op": "=", "args": [
            {"property": "datetime"}, {"date": "2021-01-02"}]}, ["d2"]),
        ("S_INTERSECTS(geometry, BBOX(15, -1, 35, 2))", {"op": "s_intersects", "args": [
            {"property": "geometry"}, {"bbox": [15, -1, 35, 2]}]}, ["d2", "d3"]),
        ("created >= TIMESTAMP('2021-02-03T00:00:00Z')", {"op": ">=", "args": [
            {"property": "created"}, {"timestamp": "2021-02-03T00:00:00Z"}]},
         ["d1", "d2", "d3", "d4"]),
        ("updated < TIMESTAMP('2021-02-03T00:00:00Z')", {"op": "<", "args": [
            {"property": "updated"}, {"timestamp": "2021-02-03T00:00:00Z"}]}, []),
    ]
    for text, cql2, expected in asked:
        got = await alice_data.get("/data/search", params={
            "collections": collection, "filter": text, "filter-lang": "cql2-text"})
        posted = await alice_data.post("/data/search", json={
            "collections": [collection], "filter": cql2, "filter-lang": "cql2-json"})
        for r in (got, posted):
            assert (r.status_code, sorted(f["id"] for f in r.json()["features"])) == (
                200, expected), (text, r.text)


async def test_true_and_false_are_filters(alice_data: httpx.AsyncClient,
                                          collection: str) -> None:
    """`filter=TRUE` (CQL2 allows a bare boolean) answered the model's "Input should be a
    valid dictionary"; now TRUE finds every item and FALSE none."""
    await _seed(alice_data, collection)
    found = {}
    for text in ("TRUE", "FALSE", "true AND id <> 'q1'"):
        r = await alice_data.get("/data/search", params={
            "collections": collection, "filter": text, "filter-lang": "cql2-text"})
        assert r.status_code == 200, r.text
        found[text] = sorted(f["id"] for f in r.json()["features"])
    assert found == {"TRUE": ["q1", "q2", "q3", "q4"], "FALSE": [],
                     "true AND id <> 'q1'": ["q2", "q3", "q4"]}
