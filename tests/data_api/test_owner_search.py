"""`owner` in GET and POST /search, AND-ed with every other search parameter."""

from __future__ import annotations

import httpx
import pytest

from tests.support.stac import make_item


@pytest.fixture
async def mixed(alice_data: httpx.AsyncClient, bob_data: httpx.AsyncClient, collection: str) -> str:
    url = f"/data/collections/{collection}/items"
    for n in range(4):
        for user, prefix in ((alice_data, "a"), (bob_data, "b")):
            r = await user.post(url, json=make_item(f"{prefix}{n}", x=n * 10, day=n + 1))
            assert r.status_code == 201
    return collection


def ids(page: dict) -> list[str]:
    return [f["id"] for f in page["features"]]


async def test_get_search_by_owner(anon: httpx.AsyncClient, mixed: str) -> None:
    page = (await anon.get("/data/search", params={"owner": "alice", "limit": 250,
                                                   "collections": mixed})).json()
    assert sorted(ids(page)) == ["a0", "a1", "a2", "a3"]
    assert all(f["properties"]["owner"] == "alice" for f in page["features"])


@pytest.mark.parametrize("params, expected", [
    ({"bbox": "-1,-1,12,2"}, ["a0", "a1"]),
    ({"datetime": "2021-01-02T00:00:00Z/2021-01-03T23:59:59Z"}, ["a1", "a2"]),
    ({"filter": "id IN ('a0','a3','b0')", "filter-lang": "cql2-text"}, ["a0", "a3"]),
    ({"filter": '{"op":"=","args":[{"property":"id"},"a2"]}', "filter-lang": "cql2-json"},
     ["a2"]),
])
async def test_get_owner_combines(anon: httpx.AsyncClient, mixed: str, params, expected):
    query = {"owner": "alice", "collections": mixed, **params}
    r = await anon.get("/data/search", params=query)
    assert r.status_code == 200, r.text
    assert sorted(ids(r.json())) == expected


async def test_get_owner_with_sortby_and_paging(anon: httpx.AsyncClient, mixed: str) -> None:
    r = await anon.get("/data/search", params={"owner": "bob", "collections": mixed,
                                               "sortby": "-datetime", "limit": 3})
    page = r.json()
    assert ids(page) == ["b3", "b2", "b1"]
    next_link = next(link["href"] for link in page["links"] if link["rel"] == "next")
    assert "owner=bob" in next_link
    assert ids((await anon.get(next_link)).json()) == ["b0"]


async def test_post_search_by_owner(anon: httpx.AsyncClient, mixed: str) -> None:
    body = {"owner": "bob", "collections": [mixed], "bbox": [-1, -1, 12, 2],
            "filter": {"op": "<>", "args": [{"property": "id"}, "b0"]},
            "sortby": [{"field": "id", "direction": "desc"}]}
    r = await anon.post("/data/search", json=body)
    assert r.status_code == 200, r.text
    assert ids(r.json()) == ["b1"]
    r = await anon.post("/data/search", json={"owner": "nobody", "collections": [mixed]})
    assert ids(r.json()) == []


async def test_post_owner_with_query_extension(anon: httpx.AsyncClient, mixed: str) -> None:
    body = {"owner": "alice", "collections": [mixed],
            "query": {"datetime": {"gte": "2021-01-03T00:00:00Z"}}}
    r = await anon.post("/data/search", json=body)
    assert r.status_code == 200, r.text
    assert sorted(ids(r.json())) == ["a2", "a3"]


BOBS = '{"filter": {"op": "=", "args": [{"property": "owner"}, "bob"]}}'


async def _plan(app, where_sql: str, query: str) -> list[str]:
    """The plan lines of `query` ({where}: what `where_sql` makes of an owner filter for
    bob), without costs; on a few rows, the scans and sorts that would win at this size
    are off."""
    async with app.state.readpool.acquire() as conn:
        where = await conn.fetchval(where_sql, BOBS)
        await conn.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        plan = [r[0] for r in await conn.fetch(f"EXPLAIN (COSTS OFF) {query.format(where=where)}")]
        await conn.execute("RESET enable_seqscan; RESET enable_bitmapscan")
    return [line.strip().removeprefix("->").strip() for line in plan]


async def test_owner_search_is_answered_from_the_index(app, mixed: str) -> None:
    """pgstac's own SQL for an owner search, run on the search index, uses its owner index
    (in the default order's leading key: at scale only ties of the same datetime are sorted,
    an incremental sort; on this handful of rows the planner may sort them whole)."""
    plan = await _plan(
        app, "SELECT geocatalog.plain_properties(pgstac.stac_search_to_where($1::text::jsonb))",
        "SELECT id FROM geocatalog.search_items WHERE {where} "
        "ORDER BY datetime DESC, collection DESC, id DESC LIMIT 10")
    nodes = [line for line in plan if ":" not in line]
    assert nodes[0] == "Limit" and nodes[1] in ("Incremental Sort", "Sort"), plan
    assert nodes[2:] == ["Index Scan using search_items_owner_idx on search_items"], plan


async def test_an_owners_count_reads_the_owner_index_alone(app, mixed: str) -> None:
    """An owner search's count, as an anonymous reader's (public items only), is an
    index-only scan of the owner index: the owner is a column of the search index, and who
    reads each item is in that index too (no row is read from the table for pages vacuumed
    since their last write: `migrate` vacuums, test_upgrade.py)."""
    plan = await _plan(app, "SELECT geocatalog.search_where($1::text::jsonb)",
                       "SELECT count(*) FROM geocatalog.search_items WHERE {where}")
    assert plan == [
        "Aggregate", "Index Only Scan using search_items_owner_idx on search_items",
        "Index Cond: (owner = 'bob'::text)", "Filter: (readers IS NULL)"], plan
