"""Aggregations of many matches, counted from the search index's sample: for random searches,
readers and budgets (`AGGREGATE_EXACT_UP_TO`), an answer not marked approximate equals the
exact counts, and one marked approximate equals the counts of the tier the rule picks (the
coarsest tier whose next would read more than the budget), scaled by its rate: each
recomputed here from pgstac's items and their tiers."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import httpx
import psycopg
import pytest

from tests.support.cluster import migrated_database
from tests.support.http import http_client
from tests.support.issuer import TestIssuer
from tests.support.stac import make_collection, make_item

COLLECTIONS = ["test_cf-snowfall_flux", "test_cf-sea_ice_thickness", "test_cf-wind_speed"]
PLATFORMS = ["argo", "glider", "ship", None]
OWNERS = ["alice", "bob", "carol"]
PROJECT = "ice-lab"
ITEMS = 6_000
#: The API's budget in these tests (the default is larger than this set's searches)
BUDGET = 300
NAMES = ["total_count", "datetime_min", "datetime_max", "collection_frequency",
         "datetime_frequency", "datetime_yearly_frequency", "platform_frequency",
         "owner_frequency"]


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    url = migrated_database(database_url, "sampled_")
    rng = random.Random(24)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        for collection in COLLECTIONS:
            conn.execute("SELECT create_collection(%s::jsonb)",
                         (json.dumps(make_collection(collection)),))
        items = []
        for n in range(ITEMS):
            collection = COLLECTIONS[min(int(rng.expovariate(1.0)), 2)]  # uneven
            doc = make_item(f"s{n:05d}", collection_id=collection, x=rng.uniform(-170, 169))
            owner = rng.choice(OWNERS)
            doc["properties"] = {
                "datetime": f"{rng.randint(2019, 2022)}-{rng.randint(1, 12):02d}-"
                            f"{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z",
                "owner": owner,
                **rng.choice([{}, {}, {"visibility": "private"},
                              {"visibility": "project", "project": PROJECT}])}
            if platform := rng.choice(PLATFORMS):
                doc["properties"]["platform"] = platform
            doc.update(stac_version="1.0.0", links=[])
            items.append(doc)
        for start in range(0, ITEMS, 2_000):
            conn.execute("SELECT create_items(%s::jsonb)",
                         (json.dumps(items[start:start + 2_000]),))
    return url


@pytest.fixture(scope="module")
async def clients(service_app, database: str, issuer: TestIssuer
                  ) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    async with service_app(database=database, aggregate_exact_up_to=BUDGET) as service, \
            http_client(service.app) as anonymous, \
            http_client(service.app, issuer.token("alice", groups=[PROJECT])) as alice:
        yield {"anonymous": anonymous, "alice": alice}


#: The reader each client is, as the data API hands it to the database
READERS = {"anonymous": {}, "alice": {"user": "alice", "groups": [PROJECT]}}


def _search(rng: random.Random) -> tuple[dict[str, str], str, list[Any]]:
    """Random search parameters, and the same as a condition over pgstac.items `i`."""
    params: dict[str, str] = {}
    where, args = ["TRUE"], []
    if rng.random() < 0.4:
        chosen = rng.sample(COLLECTIONS, rng.randint(1, 2))
        params["collections"] = ",".join(chosen)
        where.append("i.collection = ANY(%s)")
        args.append(chosen)
    if rng.random() < 0.5:
        year = rng.randint(2019, 2022)
        params["datetime"] = f"{year}-01-01T00:00:00Z/{year + rng.randint(0, 2)}-12-31T23:59:59Z"
        lo, hi = params["datetime"].split("/")
        where.append("i.datetime BETWEEN %s AND %s")
        args += [lo, hi]
    if rng.random() < 0.7:
        west = rng.randint(-170, 100)
        east = west + rng.choice([5, 30, 90, 200])
        params["bbox"] = f"{west},0,{min(east, 180)},1"
        where.append("ST_Intersects(i.geometry, ST_MakeEnvelope(%s, 0, %s, 1, 4326))")
        args += [west, min(east, 180)]
    return params, " AND ".join(where), args


def _month(t: datetime, yearly: bool = False) -> str:
    return f"{t.year:04d}-{1 if yearly else t.month:02d}-01T00:00:00Z"


def _counts(rows: list[tuple], rate: int) -> dict[str, Any]:
    """The aggregations of `rows` (collection, datetime, platform, owner), counts times
    `rate`; answered()'s shape."""
    def freq(values: list[Any]) -> dict[Any, int]:
        return {k: n * rate for k, n in Counter(v for v in values if v is not None).items()}
    times = sorted(r[1] for r in rows)
    return {"total_count": len(rows) * rate,
            "datetime_min": times[0].strftime("%Y-%m-%dT%H:%M:%SZ") if rows else None,
            "datetime_max": times[-1].strftime("%Y-%m-%dT%H:%M:%SZ") if rows else None,
            "collection_frequency": freq([r[0] for r in rows]),
            "datetime_frequency": freq([_month(r[1]) for r in rows]),
            "datetime_yearly_frequency": freq([_month(r[1], yearly=True) for r in rows]),
            "platform_frequency": freq([r[2] for r in rows]),
            "owner_frequency": freq([r[3] for r in rows])}


def expected(database: str, where: str, args: list[Any], reader: dict[str, Any],
             budget: int) -> tuple[dict[str, Any], bool]:
    """The answer the rule gives (and whether it is approximate), from the readable
    matches among pgstac's items and their tiers."""
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT i.collection, i.datetime, i.content->'properties'->>'platform', "
            "i.content->'properties'->>'owner', geocatalog.sample_tier(i.id, i.collection) "
            f"FROM pgstac.items i WHERE {where} "
            "AND geocatalog.may_read(i.content->'properties', %s::jsonb)",
            [*args, json.dumps(reader)]).fetchall()
    for tier in (3, 2, 1):
        sampled = [r[:4] for r in rows if r[4] >= tier]
        if len(sampled) * 10 > budget:
            return _counts(sampled, 10 ** tier), True
    return _counts([r[:4] for r in rows], 1), False


def answered(aggregations: list[dict[str, Any]]) -> tuple[dict[str, Any], set[bool]]:
    """The aggregations by name (buckets as {key: frequency}, checking each overflow), and
    the set of their `approximate` marks (False: none)."""
    found: dict[str, Any] = {}
    for agg in aggregations:
        if "buckets" in agg:
            found[agg["name"]] = {b["key"]: b["frequency"] for b in agg["buckets"]}
            assert agg["overflow"] == found["total_count"] - sum(found[agg["name"]].values())
        else:
            found[agg["name"]] = agg["value"]
    return found, {agg.get("approximate", False) for agg in aggregations}


def test_a_tenth_a_hundredth_a_thousandth_are_sampled(database: str) -> None:
    with psycopg.connect(database) as conn:
        tiers = dict(conn.execute(
            "SELECT tier, count(*) FROM (SELECT geocatalog.sample_tier(id, collection) AS tier "
            "FROM pgstac.items) t GROUP BY 1").fetchall())
        sample = conn.execute("SELECT count(*) FROM geocatalog.search_sample").fetchone()
    assert 450 <= sum(n for t, n in tiers.items() if t >= 1) <= 750, tiers
    assert 30 <= sum(n for t, n in tiers.items() if t >= 2) <= 100, tiers
    assert sample == (sum(n for t, n in tiers.items() if t >= 1),)


async def test_answers_through_the_api(clients: dict[str, httpx.AsyncClient],
                                       database: str) -> None:
    rng = random.Random(80)
    kinds: Counter[bool] = Counter()
    for _ in range(24):
        params, where, args = _search(rng)
        name = rng.choice(sorted(clients))
        r = await clients[name].get("/data/aggregate",
                                    params={**params, "aggregations": ",".join(NAMES)})
        assert r.status_code == 200, (params, r.text)
        want, approximate = expected(database, where, args, READERS[name], BUDGET)
        found, marks = answered(r.json()["aggregations"])
        assert marks == {approximate}, (params, name)
        assert found == want, (params, name)
        kinds[approximate] += 1
    assert kinds[True] >= 4 and kinds[False] >= 4, kinds  # both kinds of answer were tried


def test_answers_at_random_budgets(database: str) -> None:
    rng = random.Random(81)
    for _ in range(30):
        params, where, args = _search(rng)
        search: dict[str, Any] = {"reader": READERS[rng.choice(sorted(READERS))]}
        if "collections" in params:
            search["collections"] = params["collections"].split(",")
        if "datetime" in params:
            search["datetime"] = params["datetime"]
        if "bbox" in params:
            search["bbox"] = [float(v) for v in params["bbox"].split(",")]
        budget = rng.choice([0, 40, 300, 2_000, 10 ** 6])
        with psycopg.connect(database) as conn:
            row = conn.execute("SELECT geocatalog.aggregate(%s::jsonb, %s, 1000, %s)",
                               (json.dumps(search), NAMES, budget)).fetchone()
        assert row is not None
        want, approximate = expected(database, where, args, search["reader"], budget)
        found, marks = answered(row[0])
        assert marks == {approximate}, (search, budget)
        assert found == want, (search, budget)


async def test_the_search_page_says_its_facets_are_estimates(
        clients: dict[str, httpx.AsyncClient]) -> None:
    """A person's search of many matches: the facets' counts read "~N", N the API's."""
    criteria = {"bbox": "-170,0,180,1", "datetime": "2019-01-01T00:00:00Z/.."}
    r = await clients["anonymous"].get(
        "/data/aggregate", params={**criteria, "aggregations": "datetime_yearly_frequency"})
    years = r.json()["aggregations"][0]
    assert years["approximate"] is True
    page = await clients["anonymous"].get("/ui/search", params=criteria)
    assert page.status_code == 200
    for bucket in years["buckets"]:
        year = bucket["key"][:4]
        assert (f'">{year}</a> <span class="count" title="About: counted from a sample of '
                f'the matches">~{bucket["frequency"]}</span>') in page.text
