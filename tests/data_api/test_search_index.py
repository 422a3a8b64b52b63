"""The search index never disagrees with pgstac.items, however items arrive or change (the
API's single, bulk, PUT, PATCH and DELETE writes, `geocatalog load`, pypgstac's own loader,
a publishing job, direct SQL: an update, a move to another collection, a delete, a
TRUNCATE of a partition), and `geocatalog.search` answers as pgstac's own `search()` on
random queries, page by page."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from pypgstac.db import PgstacDB
from pypgstac.load import Loader, Methods

from stac_ext.publish.demo_files import campaign
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT
from tests.support.jobs import execute, wait_for
from tests.support.roles import role_env
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import make_collection, make_item

COLLECTIONS = [f"test_conv-index_{n}" for n in range(5)]
YEARLY = "test_conv-index_yearly"  # partitioned by year too: leaves of leaves
GONE = "test_conv-index_gone"  # made and deleted with its items
OWNERS = ["alice", "bob", "carol"]

#: The index as pgstac.items holds it, both ways (the words: of the item and its collection).
_ITEMS = """
SELECT i.id, i.collection, i.datetime, i.end_datetime, i.geometry::text,
       jsonb_build_object('properties', i.content->'properties'),
       geocatalog.item_words(i.content->'properties', i.collection, c.content->>'title')::text
FROM pgstac.items i JOIN pgstac.collections c ON c.id = i.collection
"""
_INDEX = """
SELECT id, collection, datetime, end_datetime, geometry::text, content, words::text
FROM geocatalog.search_items
"""
DIFFERENCE = f"({_ITEMS} EXCEPT {_INDEX}) UNION ALL ({_INDEX} EXCEPT {_ITEMS})"


def item(rng: random.Random, collection: str, n: int) -> dict:
    doc = make_item(f"i{n}", collection_id=collection, x=rng.uniform(-170, 160),
                    day=rng.randint(1, 28))
    doc["properties"]["datetime"] = (f"{rng.randint(2019, 2022)}-{rng.randint(1, 12):02d}-"
                                     f"{rng.randint(1, 28):02d}T00:00:00Z")
    if rng.random() < 0.25:  # a time range (up to 400 days): the searches' datetime bound
        start = datetime.fromisoformat(doc["properties"]["datetime"])
        end = start + timedelta(days=rng.randint(0, 400), hours=rng.randint(0, 23))
        doc["properties"].update(start_datetime=doc["properties"]["datetime"],
                                 end_datetime=end.isoformat().replace("+00:00", "Z"))
    doc["properties"]["owner"] = rng.choice(OWNERS)
    doc["properties"]["rank"] = rng.randint(0, 5)
    doc["stac_version"] = "1.0.0"
    doc["links"] = []
    return doc


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    url = new_database(database_url, "index_")
    assert run_cli("migrate", env={"DATABASE_URL": url, **role_env(url)}).returncode == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        for collection in [*COLLECTIONS, YEARLY]:
            conn.execute("SELECT create_collection(%s::jsonb)",
                         (json.dumps(make_collection(collection)),))
        conn.execute("UPDATE collections SET partition_trunc = 'year' WHERE id = %s",
                     (YEARLY,))
    return url


@pytest.fixture(scope="module")
def queue() -> Iterator[str]:
    yield f"index-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def service(service_app, database: str, queue: str) -> AsyncIterator:
    async with service_app(database=database, job_queue=queue, in_process_worker=True) as started:
        yield started.app


def disagreements(url: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(DIFFERENCE).fetchall()


def planned_rows(dsn: str) -> int:
    """The search index's rows as the planner's statistics count them."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT reltuples::bigint FROM pg_class "
                           "WHERE oid = 'geocatalog.search_items'::regclass").fetchone()
    assert row is not None
    return int(row[0])


def indexed_rows(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM geocatalog.search_items").fetchone()
    assert row is not None
    return int(row[0])


async def test_the_index_follows_every_write(service, issuer, database: str, s3_endpoint: str,
                                             tmp_path: Path) -> None:
    rng = random.Random(29)
    async with http_client(service, issuer.token("alice")) as alice, \
            http_client(service, issuer.token("root", rights=[ADMIN_RIGHT])) as admin:
        # the API: single posts, a FeatureCollection, PUT, PATCH, DELETE
        for n in range(12):
            r = await alice.post(f"/data/collections/{COLLECTIONS[n % 3]}/items",
                                 json=item(rng, COLLECTIONS[n % 3], n))
            assert r.status_code == 201, r.text
        batch = [item(rng, YEARLY, n) for n in range(100, 130)]
        r = await alice.post(f"/data/collections/{YEARLY}/items",
                             json={"type": "FeatureCollection", "features": batch})
        assert r.status_code == 201, r.text
        changed = item(rng, COLLECTIONS[0], 0)
        changed["properties"]["title"] = "replaced"
        assert (await alice.put(f"/data/collections/{COLLECTIONS[0]}/items/i0",
                                json=changed)).status_code == 200
        assert (await alice.patch(
            f"/data/collections/{YEARLY}/items/i100", json={"properties": {
                "datetime": "2022-12-31T00:00:00Z"}},  # into another yearly partition
            headers={"Content-Type": "application/merge-patch+json"})).status_code == 200
        assert (await alice.delete(f"/data/collections/{COLLECTIONS[1]}/items/i1")
                ).status_code == 204
        # bulk: insert, then upsert of what exists
        bulk = {f"b{n}": item(rng, COLLECTIONS[2], n) | {"id": f"b{n}"} for n in range(10)}
        for method in ("insert", "upsert"):
            r = await admin.post(f"/data/collections/{COLLECTIONS[2]}/bulk_items",
                                 json={"method": method, "items": bulk})
            assert r.status_code == 200 and r.json()["errors"] == [], r.text
    assert disagreements(database) == []

    # geocatalog load (insert, then upsert) and pypgstac's loader (the operator's own path)
    path = tmp_path / "items.ndjson"
    path.write_text("\n".join(json.dumps(item(rng, COLLECTIONS[3], n) | {"id": f"l{n}"})
                              for n in range(40)))
    env = {"DATABASE_URL": database}
    assert run_cli("load", str(path), env=env).returncode == 0
    # the planner knows the new rows when the command returns (not at autovacuum's turn)
    assert planned_rows(database) == indexed_rows(database)
    assert run_cli("load", str(path), "--method", "upsert", env=env).returncode == 0
    with PgstacDB(dsn=database) as db:
        Loader(db=db).load_items(iter([item(rng, COLLECTIONS[4], n) | {"id": f"p{n}"}
                                       for n in range(40)]), Methods.upsert)
    assert disagreements(database) == []

    # a publishing job
    s3 = s3_client(s3_endpoint)
    bucket = f"index-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    for key, data in campaign():
        s3.put_object(Bucket=bucket, Key=f"campaign/{key}", Body=data)
    async with http_client(service, issuer.token("alice", client=PROCESS_CLIENT)) as jobs:
        r = await execute(jobs, "publish-dataset", {"source": f"s3://{bucket}/campaign", "s3": {
            "accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": s3_endpoint,
            "defaultRegion": "us-east-1"}})
        job = await wait_for(jobs, r.headers["Location"], "successful", "failed", seconds=120)
        assert job["status"] == "successful", job
    assert disagreements(database) == []

    # direct SQL: an update, a move to another collection, a delete, a TRUNCATE
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("UPDATE pgstac.items SET content = jsonb_set(content, "
                     "'{properties,owner}', '\"dave\"') WHERE collection = %s AND id = 'l1'",
                     (COLLECTIONS[3],))
        conn.execute(  # hidden: the collection's markers follow its readers
            "UPDATE pgstac.items SET content = jsonb_set(content, '{properties,visibility}', "
            "'\"private\"') WHERE collection = %s AND id = 'l4'", (COLLECTIONS[3],))
        conn.execute(  # at a time the target partition's constraints admit
            "UPDATE pgstac.items SET collection = %s, (datetime, end_datetime) = "
            "(SELECT datetime, end_datetime FROM pgstac.items WHERE collection = %s LIMIT 1) "
            "WHERE collection = %s AND id = 'l2'", (COLLECTIONS[0], COLLECTIONS[0],
                                                   COLLECTIONS[3]))
        conn.execute("DELETE FROM pgstac.items WHERE collection = %s AND id = 'l3'",
                     (COLLECTIONS[3],))
        leaf = conn.execute("SELECT partition FROM pgstac.partition_stats WHERE collection = %s "
                            "AND partition_dtrange @> '2020-06-01'::timestamptz",
                            (YEARLY,)).fetchone()
        if leaf is not None:
            conn.execute(f'TRUNCATE pgstac."{leaf[0]}"')
        # a collection deleted with its items (pgstac drops its partition): they leave too
        conn.execute("SELECT pgstac.create_collection(%s::jsonb)",
                     (json.dumps(make_collection(GONE)),))
        conn.execute("SELECT pgstac.create_item(%s::jsonb)",
                     (json.dumps(item(rng, GONE, 0)),))
        assert conn.execute("SELECT count(*) FROM geocatalog.search_items "
                            "WHERE collection = %s", (GONE,)).fetchone() == (1,)
        conn.execute("SELECT pgstac.delete_collection(%s)", (GONE,))
    assert disagreements(database) == []
    with psycopg.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM geocatalog.search_items "
                            "WHERE collection = %s", (GONE,)).fetchone() == (0,)
    with psycopg.connect(database) as conn:
        populated = set(conn.execute(
            "SELECT collection, readers FROM geocatalog.populated_collections").fetchall())
        with_items = set(conn.execute(
            "SELECT DISTINCT collection, coalesce(geocatalog.item_readers("
            "content->'properties'), 'public') FROM pgstac.items").fetchall())
    assert populated == with_items
    assert any(readers.startswith("user:") for _, readers in populated)


def random_search(rng: random.Random) -> dict:
    body: dict = {"limit": rng.choice([1, 3, 10, 50])}
    if rng.random() < 0.5:
        body["collections"] = rng.sample([*COLLECTIONS, YEARLY], rng.randint(1, 3))
    if rng.random() < 0.4:
        x, y = rng.uniform(-170, 100), rng.uniform(-10, 0)
        body["bbox"] = [x, y, x + rng.uniform(5, 80), y + rng.uniform(1, 10)]
    if rng.random() < 0.4:
        year = rng.randint(2019, 2022)
        body["datetime"] = f"{year}-01-01T00:00:00Z/{year + rng.randint(0, 1)}-06-30T00:00:00Z"
    if rng.random() < 0.2:
        year = rng.randint(2019, 2023)
        body["filter-lang"] = "cql2-json"
        body["filter"] = {"op": rng.choice(["t_intersects", "t_after", "t_overlaps"]), "args": [
            {"property": "datetime"},
            {"interval": [f"{year}-03-01T00:00:00Z", f"{year}-09-01T00:00:00Z"]}]}
    elif rng.random() < 0.4:
        body["filter"] = {"op": "=", "args": [{"property": "owner"}, rng.choice(OWNERS)]}
    elif rng.random() < 0.3:
        body["filter"] = {"op": ">=", "args": [{"property": "rank"}, rng.randint(0, 5)]}
    if rng.random() < 0.3:
        body["ids"] = [f"i{rng.randint(0, 130)}" for _ in range(rng.randint(1, 20))]
    if rng.random() < 0.3:
        body["sortby"] = [{"field": rng.choice(["datetime", "id", "properties.rank"]),
                           "direction": rng.choice(["asc", "desc"])}]
    if rng.random() < 0.2:
        body["fields"] = {"include": ["id", "properties.owner"], "exclude": ["links"]}
    return body


def same_page(conn: psycopg.Connection, query: dict) -> dict[str, str]:
    """geocatalog's page of `query` is pgstac's search()'s, whole: the tokens of its next
    and prev links."""
    ours, theirs = conn.execute("SELECT geocatalog.search(%s::jsonb), search(%s::jsonb)",
                                (json.dumps(query), json.dumps(query))).fetchone()
    assert ours == theirs, query
    return {link["rel"]: link["href"].split("token=")[1]
            for link in theirs["links"] if link["rel"] in ("next", "prev")}


def test_searches_answer_as_pgstac_search(database: str) -> None:
    """Random searches and every page they link to (next, then back by prev): the index's
    answer is pgstac's, whole, numberMatched included (as an administrator reads: pgstac
    knows no visibility, and an item above is private)."""
    rng = random.Random(30)
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        compared = 0
        for _ in range(60):
            body = random_search(rng)
            for conf in ({"nohydrate": True}, {}):
                pages = 0
                query = {**body, "conf": conf, "reader": {"all": True}}
                while query is not None and pages < 6:
                    tokens = same_page(conn, query)
                    compared += 1
                    pages += 1
                    rel = "next" if pages < 4 else "prev"
                    query = {**query, "token": tokens[rel]} if rel in tokens else None
    assert compared >= 150


def pages_both_ways(conn: psycopg.Connection, body: dict) -> int:
    """Every page of `body`, next to the end and back by prev, geocatalog's against pgstac's
    search(): how many pages."""
    query: dict | None = {**body, "conf": {"nohydrate": True}, "reader": {"all": True}}
    pages, rel = 0, "next"
    while query is not None:
        tokens = same_page(conn, query)
        pages += 1
        rel = rel if rel in tokens else "prev"
        query = {**query, "token": tokens[rel]} if rel in tokens else None
    return pages


def test_a_places_pages_in_time_order_keep_their_ties(database: str) -> None:
    """A search of a place is paged nearest in time first (nearest_keys, from the window's
    end or the token's time), through the time-and-place index: with many matches at each
    time, the ties cut by every page, each page next and back is pgstac's own."""
    ties = "test_conv-index_ties"
    rng = random.Random(5)
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        conn.execute("SELECT create_collection(%s::jsonb)", (json.dumps(make_collection(ties)),))
        docs = [make_item(f"t{n:02d}", collection_id=ties, x=rng.uniform(0, 20),
                          day=rng.choice([3, 4, 9])) | {"stac_version": "1.0.0", "links": []}
                for n in range(90)]
        conn.execute("SELECT create_items(%s::jsonb)", (json.dumps(docs),))
        window = "2021-01-01T00:00:00Z/2021-01-31T00:00:00Z"
        square = {"type": "Polygon",
                  "coordinates": [[[5, 0], [15, 0], [15, 1], [5, 1], [5, 0]]]}
        pages = [pages_both_ways(conn, body) for body in (
            {"collections": [ties], "bbox": [0, 0, 12, 1], "datetime": window, "limit": 4},
            {"intersects": square, "datetime": window, "limit": 5},  # every collection
            {"bbox": [0, 0, 12, 1], "limit": 6},  # no window: the tokens' times
            {"bbox": [0, 0, 12, 1], "datetime": window, "limit": 4,
             "sortby": [{"field": "datetime", "direction": "asc"}]})]
        assert min(pages) > 10, pages
        where = conn.execute("SELECT geocatalog.search_where(%s::jsonb)", (json.dumps(
            {"bbox": [0, 0, 12, 1], "datetime": window, "reader": {"all": True}}),)
        ).fetchone()[0]
        # on a few rows, the scans and sorts that would win at this size are off
        conn.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        plan = [r[0].strip() for r in conn.execute(
            "EXPLAIN (COSTS OFF) SELECT id FROM geocatalog.search_items "
            f"WHERE {where} ORDER BY datetime <-> '2021-01-31'::timestamptz LIMIT 5")]
    assert plan[:2] == ["Limit", "->  Index Scan using search_items_time_place_idx on "
                        "search_items"], plan
    assert "Order By: (datetime <-> '2021-01-31 00:00:00+00'::timestamp with time zone)" \
        in plan, plan


def test_a_count_is_exact_up_to_its_bound_and_none_above(database: str) -> None:
    """`numberMatched` is the number of matches up to `context_count_max` and absent above
    it, never the planner's estimate (pgstac's rule gave that above its threshold): counted
    one past the bound, and not counted at all where the planner expects more. With
    pgstac's `context` 'on' it is counted whatever the number, with 'off' never."""
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        # the planner's estimates as of now, not as of whenever autovacuum last came
        conn.execute("ANALYZE geocatalog.search_items")

        def planned(search: dict) -> tuple[int, int]:
            """The planner's estimate of a search's matches, and their number."""
            where = conn.execute("SELECT geocatalog.search_where(%s::jsonb)",
                                 (json.dumps(search),)).fetchone()[0]
            estimate = conn.execute("EXPLAIN (format json) SELECT FROM geocatalog.search_items "
                                    f"WHERE {where}").fetchone()[0][0]["Plan"]["Plan Rows"]
            exact = conn.execute(f"SELECT count(*) FROM geocatalog.search_items WHERE {where}"
                                 ).fetchone()[0]
            return estimate, exact

        def page(search: dict, **conf: object) -> dict:
            conf = {"nohydrate": True, "context_stats_ttl": "0 seconds", **conf}
            return conn.execute("SELECT geocatalog.search(%s::jsonb)", (json.dumps(
                {**search, "limit": 1, "conf": conf}),)).fetchone()[0]

        def absent(search: dict, bound: int) -> None:
            above = page(search, context_count_max=bound)
            assert "numberMatched" not in above and len(above["features"]) == 1, bound
            assert [link["rel"] for link in above["links"]] == ["root", "self", "next"]

        place = {"collections": [COLLECTIONS[0]], "bbox": [-170, -10, 0, 10]}
        estimate, exact = planned(place)
        assert 1 < estimate < exact  # fewer planned than there are: counted one past
        assert page(place, context_count_max=exact)["numberMatched"] == exact
        absent(place, exact - 1)
        assert page(place, context="on", context_count_max=1)["numberMatched"] == exact
        assert "numberMatched" not in page(place, context="off")

        # a property's range, which the planner rates at a third of the rows: more
        # planned than there are, so not counted
        ranked = {"filter": {"op": ">=", "args": [{"property": "rank"}, 5]}}
        estimate, exact = planned(ranked)
        assert 1 < exact < estimate
        assert page(ranked, context_count_max=estimate)["numberMatched"] == exact
        absent(ranked, exact)


def test_a_time_window_bounds_datetime_from_both_ends(database: str) -> None:
    """`end_datetime >= t` also says `datetime >= t - the longest span` (so the datetime
    index is read between two bounds), with the longest span any item of the catalog has
    had; the answers stay pgstac's (above)."""
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        longest, stored = conn.execute(
            "SELECT (SELECT max(span)::text FROM geocatalog.item_spans), "
            "       (SELECT max(end_datetime - datetime) FROM pgstac.items)").fetchone()
        assert stored.days > 30  # the data set has ranges
        where = conn.execute(
            "SELECT geocatalog.datetime_bounded(pgstac.stac_search_to_where(%s::jsonb))",
            (json.dumps({"datetime": "2020-01-01T00:00:00Z/2020-06-30T00:00:00Z"}),)
        ).fetchone()[0]
    assert (f"(end_datetime >= '2020-01-01 00:00:00+00'::timestamptz AND datetime >= "
            f"'2020-01-01 00:00:00+00'::timestamptz - '{longest}'::interval)") in where


def test_a_pypgstac_load_leaves_the_planner_fresh(database_url: str) -> None:
    """`pypgstac load` into a migrated database writes the index through its triggers, which
    analyze it once a statement has grown it by half: the planner knows a large load's rows
    when the load returns, autovacuum or not (off here); a small one waits for autovacuum."""
    url = new_database(database_url, "fresh_")
    assert run_cli("migrate", env={"DATABASE_URL": url, **role_env(url)}).returncode == 0
    collection = "test_conv-fresh"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE geocatalog.search_items SET (autovacuum_enabled = false)")
        conn.execute("SELECT pgstac.create_collection(%s::jsonb)",
                     (json.dumps(make_collection(collection)),))
    rng = random.Random(31)

    def pypgstac_load(first: int, count: int) -> None:
        with PgstacDB(dsn=url) as db:
            Loader(db=db).load_items(iter([item(rng, collection, n) | {"id": f"p{n}"}
                                           for n in range(first, first + count)]))

    pypgstac_load(0, 2000)  # never analyzed
    assert (planned_rows(url), indexed_rows(url)) == (2000, 2000)
    pypgstac_load(2000, 2000)  # twice as large
    assert (planned_rows(url), indexed_rows(url)) == (4000, 4000)
    pypgstac_load(4000, 500)  # an eighth more
    assert (planned_rows(url), indexed_rows(url)) == (4000, 4500)
