"""Free text on items (`q`): what a person types finds the items whose title, keywords,
description, variable name or collection title hold the words, on `/search` (GET and POST),
items pages and a catalog's `_search`, in the search's own order and pages, read from the
index's words (never a scan); the expected ids are computed in SQL over pgstac.items."""

from __future__ import annotations

import json

import httpx
import psycopg
import pytest

from tests.support.cluster import migrated_database
from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT
from tests.support.stac import make_collection, make_item

SALINITY, SST, AIR = ("test_cf-sea_water_salinity", "test_cf-sea_surface_temperature",
                      "test_cf-air_temperature")
TITLES = {SALINITY: "Sea water salinity", SST: "Sea surface temperature",
          AIR: "Air temperature"}

#: (id, collection, title, description, keywords); the day is the id's number
ITEMS = [
    ("s01", SALINITY, "Argo float 6901", "Calibrated profiles in the North Sea", ["argo", "ctd"]),
    ("s02", SALINITY, "Glider transect", "Quality-controlled glider data, Baltic Sea", ["glider"]),
    ("s03", SALINITY, "Mooring M3", None, ["mooring", "ctd"]),  # no description
    ("s04", SALINITY, "Arctic section", "Ship CTD casts north of the sea ice", []),
    ("s05", SALINITY, None, None, None),  # nothing but its collection
    ("t06", SST, "Satellite composite", "Daily sea surface temperatures of the North Sea",
     ["satellite"]),
    ("t07", SST, "Argo surface values", "Near-surface temperature from Argo floats, Baltic",
     ["argo"]),
    ("t08", SST, "Mooring M3 skin temperature", None, ["mooring"]),
    ("a09", AIR, "Weather station Bremen", "Air temperature at 2 m near the North Sea coast",
     ["station"]),
    ("a10", AIR, "Reanalysis", "Gridded air temperatures over the Arctic", ["model"]),
]

#: `-`, `_` and `.` within a word as a space: a file name's words (`sst-2022-01.nc`)
SPLIT = r"regexp_replace({}, '([[:alnum:]])[-_.]+(?=[[:alnum:]])', '\1 ', 'g')"
#: The words an item holds, as a reader would list them (independent of migration 007):
#: its fields as written, and again with their file names split
_TEXT = """coalesce(i.content->'properties'->>'title', '') || ' '
           || coalesce(i.content->'properties'->>'keywords', '') || ' '
           || coalesce(i.content->'properties'->>'description', '')"""
REFERENCE_WORDS = f"""
    to_tsvector('english', {_TEXT} || ' '
                || replace(replace(i.collection, '_', ' '), '-', ' ') || ' '
                || coalesce(c.content->>'title', '') || ' ' || {SPLIT.format(_TEXT)})
"""


def reference_ids(url: str, q: str) -> list[str]:
    """The ids whose words match `q` (the extension's comma-separated terms, each one
    alternative; each in web search syntax), newest first as pgstac's default order."""
    alternatives = [t for t in q.split(",") if t.strip()]
    condition = " OR ".join(
        f"{REFERENCE_WORDS} @@ websearch_to_tsquery('english', {SPLIT.format('%s')})"
        for _ in alternatives)
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            f"SELECT i.id FROM pgstac.items i JOIN pgstac.collections c "
            f"ON c.id = i.collection WHERE {condition} "
            f"ORDER BY i.datetime DESC, i.collection DESC, i.id DESC", alternatives
        ).fetchall()
    return [r[0] for r in rows]


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    url = migrated_database(database_url, "words_")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        for collection, title in TITLES.items():
            conn.execute("SELECT create_collection(%s::jsonb)", (json.dumps(
                make_collection(collection) | {"title": title}),))
        for item_id, collection, title, description, keywords in ITEMS:
            doc = make_item(item_id, collection_id=collection, x=float(item_id[1:]),
                            day=int(item_id[1:]))
            doc["properties"].update({k: v for k, v in (
                ("title", title), ("description", description), ("keywords", keywords))
                if v is not None})
            doc.update(stac_version="1.0.0", links=[])
            conn.execute("SELECT create_item(%s::jsonb)", (json.dumps(doc),))
    return url


async def found(client: httpx.AsyncClient, url: str, **params: str | int) -> list[str]:
    r = await client.get(url, params={"limit": 100, **params})
    assert r.status_code == 200, r.text
    return [f["id"] for f in r.json()["features"]]


QUERIES = [
    "salinity",                        # the variable's name, in the collection id
    "north sea",                       # all the words, anywhere in the item
    '"north sea"',                     # a phrase
    "baltic,arctic",                   # the extension's alternatives (GET: a comma)
    "temperature -air",                # a word excluded
    "glider OR mooring",               # web search's OR
    "argo float",
    "sea surface temperature",
    '"surface temperature" baltic',
    "temperatures",                    # stems: temperature
    "calibrated",
    "quality-controlled",
    "ctd",                             # a keyword
    "the",                             # only a stop word: nothing
    "nonexistentword",
    "salinity arctic",
    "sea_water",                       # an id's words
    "-salinity",                       # everything but
    '"sea water"',                     # a phrase of the variable's name
    "Sea Water Salinity",              # the collection's title, any case
    'mooring,"north sea"',
]


async def test_free_text_finds_what_sql_finds(database_client, database: str) -> None:
    for q in QUERIES:
        assert await found(database_client, "/data/search", q=q) == reference_ids(database, q), q


async def test_what_a_person_means_by_the_words(database_client) -> None:
    assert await found(database_client, "/data/search", q="salinity") == [
        "s05", "s04", "s03", "s02", "s01"]
    # words in different fields of the item and its collection
    assert await found(database_client, "/data/search", q="salinity ctd") == ["s04", "s03", "s01"]
    # a phrase is its words in order, within one field
    assert await found(database_client, "/data/search", q='"north sea"') == ["a09", "t06", "s01"]
    assert await found(database_client, "/data/search", q="temperature -air") == [
        "t08", "t07", "t06"]
    # an item without a description is found by its title (pgstac's own vector is NULL)
    assert await found(database_client, "/data/search", q="M3") == ["t08", "s03"]
    assert await found(database_client, "/data/search", q="the") == []


async def test_free_text_with_every_other_parameter(database_client, database: str) -> None:
    # POST: the extension's list of terms, alternatives
    r = await database_client.post("/data/search", json={"q": ["baltic", "arctic"], "limit": 100})
    assert r.status_code == 200, r.text
    assert [f["id"] for f in r.json()["features"]] == reference_ids(database, "baltic,arctic")
    assert r.json()["numberMatched"] == 4
    # a string, read as GET reads it, on /search and /aggregate alike
    for path in ("/data/search", "/data/aggregate"):
        by_post = await database_client.post(path, json={"q": "baltic,arctic"})
        by_get = await database_client.get(path, params={"q": "baltic,arctic"})
        assert (by_post.status_code, by_get.status_code) == (200, 200), by_post.text
        assert by_post.json()["features" if path.endswith("search") else "aggregations"] \
            == by_get.json()["features" if path.endswith("search") else "aggregations"]
    r = await database_client.post("/data/aggregate", json={
        "q": "baltic,arctic", "aggregations": ["total_count"]})
    assert r.json()["aggregations"] == [
        {"name": "total_count", "data_type": "integer", "value": 4}]
    # with collections, bbox, datetime, a filter, a sort
    assert await found(database_client, "/data/search", q="north sea", collections=SST) == ["t06"]
    assert await found(database_client, "/data/search", q="argo", bbox="6,0,8,1") == ["t07"]
    assert await found(database_client, "/data/search", q="mooring",
                       datetime="2021-01-01T00:00:00Z/2021-01-05T00:00:00Z") == ["s03"]
    assert await found(database_client, "/data/search", q="argo",
                       filter="id = 's01'", **{"filter-lang": "cql2-text"}) == ["s01"]
    assert await found(database_client, "/data/search", q="salinity", sortby="+datetime") == [
        "s01", "s02", "s03", "s04", "s05"]
    # an items page, and its pages: the tokens carry on with the words
    assert await found(database_client, f"/data/collections/{SALINITY}/items", q="ctd") == [
        "s04", "s03", "s01"]
    seen, url = [], "/data/search?q=sea&limit=2"
    while url:
        r = await database_client.get(url)
        assert r.status_code == 200, r.text
        seen += [f["id"] for f in r.json()["features"]]
        url = next((link["href"] for link in r.json()["links"] if link["rel"] == "next"), "")
    assert seen == reference_ids(database, "sea") and len(seen) > 4


async def test_a_catalogs_search_takes_words(database_app, issuer, database_client) -> None:
    async with http_client(database_app, issuer.token("alice")) as alice:
        r = await alice.post("/data/catalogs", json={
            "type": "Catalog", "id": "words-cruise", "description": "cruise",
            "links": [{"rel": "item", "href": f"collections/{SALINITY}/items/{n}"}
                      for n in ("s01", "s02", "s03")]})
        assert r.status_code == 201, r.text
    assert await found(database_client, "/data/catalogs/words-cruise/_search", q="ctd") == [
        "s03", "s01"]
    r = await database_client.post("/data/catalogs/words-cruise/_search", json={"q": ["glider"]})
    assert [f["id"] for f in r.json()["features"]] == ["s02"]


async def test_free_text_is_claimed_and_bounded(database_client) -> None:
    classes = (await database_client.get("/data/conformance")).json()["conformsTo"]
    assert "https://api.stacspec.org/v1.0.0-rc.1/item-search#free-text" in classes
    assert "https://api.stacspec.org/v1.0.0-rc.1/ogcapi-features#free-text" in classes
    r = await database_client.get("/data/search", params={"q": "sea " * 300})
    assert r.status_code == 400
    assert r.json()["description"] == "q: at most 1000 characters of search terms."
    # whatever the characters, an answer (web search syntax has no syntax errors)
    for q in ("((", "&|!", "'", '"unclosed', "a:*", "<->", "\\"):
        r = await database_client.get("/data/search", params={"q": q})
        assert r.status_code == 200, (q, r.text)


async def test_a_new_collection_title_is_searchable_at_once(database_app, issuer, database_client,
                                                             database: str) -> None:
    async with http_client(database_app, issuer.token("root", rights=[ADMIN_RIGHT])) as admin:
        doc = (await admin.get(f"/data/collections/{AIR}")).json()
        r = await admin.put(f"/data/collections/{AIR}", json={
            **doc, "links": [], "title": "Near-surface air"})
        assert r.status_code == 200, r.text
    assert await found(database_client, "/data/search", q="near-surface air") == ["a10", "a09"]
    assert await found(database_client, "/data/search", q="near-surface") == reference_ids(
        database, "near-surface")


def test_words_are_read_from_their_index(database: str) -> None:
    with psycopg.connect(database) as conn:
        where = conn.execute("SELECT geocatalog.search_where(%s::jsonb)",
                             ('{"q": "north sea"}',)).fetchone()[0]
        # a handful of rows: scans that would win at this size are off
        conn.execute("SET enable_seqscan = off; SET enable_indexscan = off")
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT id FROM geocatalog.search_items WHERE {where} "
            "ORDER BY datetime DESC LIMIT 10"))
    assert "Bitmap Index Scan on search_items_words_idx" in plan, plan


async def test_file_names_are_words(app, admin_data: httpx.AsyncClient, collection: str) -> None:
    """A published file's item is found by the parts of its name: `-`, `_` and `.` split
    words (PostgreSQL's parser read `sst-2022-01.nc` as one host name)."""
    item = make_item("sst-2022-01-nc", collection_id=collection)
    item["properties"]["title"] = "Sea surface temperature - sst-2022-01.nc"
    assert (await admin_data.post(f"/data/collections/{collection}/items",
                                  json=item)).status_code == 201
    for q in ("sst", "nc", "sst-2022", "sst 2022 01", "sst-2022-01.nc", "sst_2022",
              "temperature sst", '"sea surface temperature"'):
        assert await found(admin_data, "/data/search", q=q, collections=collection) == [
            "sst-2022-01-nc"], q
    for q in ("sst-2023", "nc -sst", "ncx"):
        assert await found(admin_data, "/data/search", q=q, collections=collection) == [], q
