"""Aggregations (`/aggregate`, `/aggregations`, per collection): counts by collection, month,
year, platform and owner, total count, datetime range and extent of a search's matches,
with every search parameter as the filter; each answer equal to the `count(*) ... GROUP
BY` SQL computes over pgstac.items for random filters."""

from __future__ import annotations

import json
import random

import psycopg
import pytest

from tests.support.cluster import migrated_database
from tests.support.stac import make_collection, make_item

COLLECTIONS = ["test_cf-sea_water_salinity", "test_cf-sea_water_temperature",
               "test_cf-air_temperature"]
PLATFORMS = ["argo", "glider", "mooring", "ship", None]
OWNERS = ["alice", "bob", "carol"]
WORDS = ["north sea", "baltic", "arctic", "mediterranean"]


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    url = migrated_database(database_url, "facets_")
    rng = random.Random(31)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        for collection in COLLECTIONS:
            conn.execute("SELECT create_collection(%s::jsonb)",
                         (json.dumps(make_collection(collection)),))
        items = []
        for n in range(300):
            collection = COLLECTIONS[min(int(rng.expovariate(1.2)), 2)]  # uneven
            doc = make_item(f"f{n:03d}", collection_id=collection, x=rng.uniform(-60, 40))
            doc["properties"] = {
                "datetime": f"{rng.randint(2019, 2022)}-{rng.randint(1, 12):02d}-"
                            f"{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z",
                "owner": rng.choice(OWNERS), "title": f"Profile {rng.choice(WORDS)}"}
            if platform := rng.choice(PLATFORMS):
                doc["properties"]["platform"] = platform
            doc.update(stac_version="1.0.0", links=[])
            items.append(doc)
        conn.execute("SELECT create_items(%s::jsonb)", (json.dumps(items),))
    return url


#: What each aggregation groups by, over pgstac.items `i`
KEYS = {
    "collection_frequency": "i.collection",
    "datetime_frequency": "to_char(i.datetime AT TIME ZONE 'UTC', 'YYYY-MM-01\"T\"00:00:00Z')",
    "datetime_yearly_frequency": "to_char(i.datetime AT TIME ZONE 'UTC', "
                                 "'YYYY-01-01\"T\"00:00:00Z')",
    "platform_frequency": "i.content->'properties'->>'platform'",
    "owner_frequency": "i.content->'properties'->>'owner'",
}


def reference(url: str, where: str, args: list) -> dict:
    """Each aggregation as SQL computes it over pgstac.items matching `where`."""
    with psycopg.connect(url) as conn:
        total, lo, hi, box = conn.execute(
            "SELECT count(*), geocatalog.utc_text(min(datetime)), "
            "geocatalog.utc_text(max(datetime)), "
            "ARRAY[ST_XMin(ST_Extent(geometry)), ST_YMin(ST_Extent(geometry)), "
            "ST_XMax(ST_Extent(geometry)), ST_YMax(ST_Extent(geometry))] "
            f"FROM pgstac.items i WHERE {where}", args).fetchone()
        answers: dict = {"total_count": total, "datetime_min": lo, "datetime_max": hi,
                         "spatial_extent": box if total else None}
        for name, key in KEYS.items():
            rows = conn.execute(f"SELECT {key}, count(*) FROM pgstac.items i WHERE {where} "
                                f"AND {key} IS NOT NULL GROUP BY 1", args).fetchall()
            answers[name] = dict(rows)
    return answers


def answered(body: dict) -> dict:
    assert body["type"] == "AggregationCollection"
    found: dict = {}
    for agg in body["aggregations"]:
        if "buckets" in agg:
            found[agg["name"]] = {b["key"]: b["frequency"] for b in agg["buckets"]}
            assert agg["overflow"] == found.get("total_count", 0) - sum(
                found[agg["name"]].values()) or "total_count" not in found
        else:
            found[agg["name"]] = agg["value"]
    return found


def close(found: dict, expected: dict) -> None:
    box, want = found.pop("spatial_extent"), expected.pop("spatial_extent")
    assert found == expected
    assert (box is None) == (want is None)
    if box is not None:
        assert box == pytest.approx(want)


async def test_facets_equal_sql_group_by(database_client, database: str) -> None:
    rng = random.Random(7)
    for _ in range(12):
        params: dict = {}
        where, args = ["TRUE"], []
        if rng.random() < 0.5:
            chosen = rng.sample(COLLECTIONS, rng.randint(1, 2))
            params["collections"] = ",".join(chosen)
            where.append("i.collection = ANY(%s)")
            args.append(chosen)
        if rng.random() < 0.5:
            year = rng.randint(2019, 2022)
            params["datetime"] = f"{year}-01-01T00:00:00Z/{year}-12-31T23:59:59Z"
            where.append("i.datetime BETWEEN %s AND %s")
            args += [f"{year}-01-01T00:00:00Z", f"{year}-12-31T23:59:59Z"]
        if rng.random() < 0.5:
            owner = rng.choice(OWNERS)
            params["owner"] = owner
            where.append("i.content->'properties'->>'owner' = %s")
            args.append(owner)
        if rng.random() < 0.5:
            west = rng.randint(-60, 20)
            params["bbox"] = f"{west},0,{west + 15},1"
            where.append("ST_Intersects(i.geometry, ST_MakeEnvelope(%s, 0, %s, 1, 4326))")
            args += [west, west + 15]
        if rng.random() < 0.4:
            word = rng.choice(WORDS)
            params["q"] = f'"{word}"'
            where.append("to_tsvector('english', i.content->'properties'->>'title') "
                         "@@ phraseto_tsquery('english', %s)")
            args.append(word)
        r = await database_client.get("/data/aggregate", params=params)
        assert r.status_code == 200, (params, r.text)
        close(answered(r.json()), reference(database, " AND ".join(where), args))


async def test_post_and_a_collections_aggregate(database_client, database: str) -> None:
    body = {"filter": {"op": "=", "args": [{"property": "platform"}, "argo"]},
            "filter-lang": "cql2-json",
            "aggregations": ["total_count", "owner_frequency", "collection_frequency"]}
    r = await database_client.post("/data/aggregate", json=body)
    assert r.status_code == 200, r.text
    assert [a["name"] for a in r.json()["aggregations"]] == body["aggregations"]
    expected = reference(database, "i.content->'properties'->>'platform' = 'argo'", [])
    found = answered(r.json())
    assert found == {name: expected[name] for name in body["aggregations"]}
    # one collection's: its items only; collection_frequency is not offered there
    salinity = COLLECTIONS[0]
    r = await database_client.get(f"/data/collections/{salinity}/aggregate",
                         params={"aggregations": "total_count,platform_frequency"})
    assert r.status_code == 200, r.text
    expected = reference(database, "i.collection = %s", [salinity])
    assert answered(r.json()) == {"total_count": expected["total_count"],
                                  "platform_frequency": expected["platform_frequency"]}
    r = await database_client.get(f"/data/collections/{salinity}/aggregate",
                         params={"aggregations": "collection_frequency"})
    assert r.status_code == 400
    assert r.json()["description"].startswith(
        "aggregations: collection_frequency not offered here; offered: total_count,")
    assert (await database_client.get("/data/collections/nope/aggregate")).status_code == 404
    assert (await database_client.get("/data/collections/nope/aggregations")).status_code == 404


async def test_what_is_offered(database_client) -> None:
    r = await database_client.get("/data/aggregations")
    assert r.status_code == 200
    assert [(a["name"], a["data_type"]) for a in r.json()["aggregations"]] == [
        ("total_count", "integer"), ("datetime_min", "datetime"),
        ("datetime_max", "datetime"), ("spatial_extent", "bbox"),
        ("collection_frequency", "frequency_distribution"),
        ("datetime_frequency", "frequency_distribution"),
        ("datetime_yearly_frequency", "frequency_distribution"),
        ("platform_frequency", "frequency_distribution"),
        ("owner_frequency", "frequency_distribution")]
    r = await database_client.get("/data/aggregate",
                                  params={"aggregations": "cloud_cover_frequency"})
    assert r.status_code == 400
    assert "cloud_cover_frequency not offered here" in r.json()["description"]
    classes = (await database_client.get("/data/conformance")).json()["conformsTo"]
    assert "https://api.stacspec.org/v0.3.0/aggregation" in classes
    landing = (await database_client.get("/data/")).json()
    assert {link["rel"] for link in landing["links"]} >= {"aggregate", "aggregations"}
    # no match: zero counts, no extent, no buckets
    r = await database_client.get("/data/aggregate", params={"q": "nonexistentword"})
    found = answered(r.json())
    assert found["total_count"] == 0 and found["spatial_extent"] is None
    assert found["datetime_min"] is None and found["collection_frequency"] == {}


async def test_openapi_operations_stay_unique(database_client) -> None:
    document = (await database_client.get("/data/api")).json()
    ids = [op["operationId"] for path in document["paths"].values()
           for op in path.values() if isinstance(op, dict) and "operationId" in op]
    assert len(ids) == len(set(ids))
    assert set(document["paths"]["/data/aggregate"]) == {"get", "post"}
    assert set(document["paths"]["/data/aggregations"]) == {"get"}
