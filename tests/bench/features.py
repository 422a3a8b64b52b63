"""Our own features, absolute figures: a 100,000-catalog tree and 1,000 concurrent jobs."""

from __future__ import annotations

import asyncio
import statistics
import time
from datetime import datetime
from typing import Any

import aiohttp
import httpx
import psycopg

from tests.bench import dataset
from tests.bench.servers import Running

TOPS = 10  # top-level catalogs, each the root of a 10,000-node subtree
SUBTREE = 10_000
CHAIN = 9  # under each top: c1/c2/.../c9, so the deepest catalog is at depth 10


def _tree_rows(first_pk: int) -> list[tuple[int, int | None, str, str]]:
    """(pk, parent pk, id, path) of 100,000 catalogs: per top, a chain to depth 10 and a
    heap of fan-out 10 (depth 5) for the rest."""
    rows: list[tuple[int, int | None, str, str]] = []
    pk = first_pk
    for t in range(TOPS):
        top_pk, top_path = pk, f"bench-t{t}"
        rows.append((top_pk, None, top_path, top_path))
        pk += 1
        parent_pk, parent_path = top_pk, top_path
        for depth in range(1, CHAIN + 1):
            path = f"{parent_path}/c{depth}"
            rows.append((pk, parent_pk, f"c{depth}", path))
            parent_pk, parent_path = pk, path
            pk += 1
        heap: list[tuple[int, str]] = []  # heap node k (1-based) -> (pk, path)
        for k in range(1, SUBTREE - CHAIN):
            ppk, ppath = (top_pk, top_path) if k <= 10 else heap[(k - 1) // 10 - 1]
            path = f"{ppath}/n{k}"
            rows.append((pk, ppk, f"n{k}", path))
            heap.append((pk, path))
            pk += 1
    return rows


def _build_tree(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        conn.execute("DELETE FROM catalogs.catalogs WHERE parent_pk IS NULL "
                     "AND id LIKE 'bench-t%'")
        first = conn.execute("SELECT coalesce(max(pk), 0) + 1 FROM catalogs.catalogs"
                             ).fetchone()
        assert first is not None
        rows = _tree_rows(first[0])
        pks, parents, ids, paths = (list(col) for col in zip(*rows, strict=True))
        conn.execute(
            "INSERT INTO catalogs.catalogs (pk, parent_pk, id, path, description, owner) "
            "OVERRIDING SYSTEM VALUE "
            "SELECT pk, parent, id, path, 'benchmark catalog', 'bench-admin' "
            "FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::text[]) "
            "AS t(pk, parent, id, path)", (pks, parents, ids, paths))
        conn.execute("SELECT setval(pg_get_serial_sequence('catalogs.catalogs', 'pk'), "
                     "(SELECT max(pk) FROM catalogs.catalogs))")
        conn.execute("ANALYZE catalogs.catalogs")
        return len(rows)


def catalog_tree(dsn: str, running: Running, admin_token: str) -> dict[str, Any]:
    """Deep GET p50 (sequential, one connection) and a 10,000-node force-delete."""
    total = _build_tree(dsn)
    deep = "/".join([f"bench-t{TOPS // 2}", *(f"c{d}" for d in range(1, CHAIN + 1))])
    timings = []
    with httpx.Client(base_url=running.url, timeout=60) as client:
        for _ in range(20):  # warm-up
            client.get(f"/catalogs/{deep}").raise_for_status()
        for _ in range(300):
            started = time.perf_counter()
            client.get(f"/catalogs/{deep}").raise_for_status()
            timings.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        answer = client.delete(f"/catalogs/bench-t{TOPS - 1}", params={"_force": "true"},
                               headers={"Authorization": f"Bearer {admin_token}"})
        delete_ms = (time.perf_counter() - started) * 1000
        answer.raise_for_status()
        deleted = len(answer.json()["deleted"])
    with psycopg.connect(dsn) as conn:
        left = conn.execute("SELECT count(*) FROM catalogs.catalogs WHERE path LIKE %s",
                            (f"bench-t{TOPS - 1}%",)).fetchone()
    return {"catalogs": total, "depth": CHAIN + 1, "deep_get_p50_ms": statistics.median(timings),
            "deep_get_p95_ms": statistics.quantiles(timings, n=20)[-1],
            "subtree": deleted, "force_delete_ms": delete_ms,
            "left_after_delete": left[0] if left else None}


SCOPE = "bench-t0"  # the subtree a catalog search is limited to
ITEM_LINKS = 2000


def _link_scope(dsn: str) -> dict[str, Any]:
    """2,000 item links (of one collection) and 2 collection links spread over the nodes
    of one 10,000-node subtree; the equivalent plain filter, as the subtree yields it."""
    *linked_collections, items_of = dataset.COLLECTIONS
    with psycopg.connect(dsn) as conn:
        nodes = [row[0] for row in conn.execute(
            "SELECT pk FROM catalogs.catalogs WHERE path = %s OR path LIKE %s ORDER BY pk",
            (SCOPE, f"{SCOPE}/%"))]
        ids = [row[0] for row in conn.execute(
            "SELECT id FROM pgstac.items WHERE collection = %s ORDER BY id LIMIT %s",
            (items_of, ITEM_LINKS))]
        targets = [(c, None) for c in linked_collections] + [(items_of, i) for i in ids]
        conn.execute(
            "INSERT INTO catalogs.links (catalog_pk, position, collection_id, item_id) "
            "SELECT pk, n, c, i FROM unnest(%s::bigint[], %s::text[], %s::text[]) "
            "WITH ORDINALITY AS t(pk, c, i, n)",
            ([nodes[(n * 7) % len(nodes)] for n in range(len(targets))],
             [c for c, _ in targets], [i for _, i in targets]))
        scope = conn.execute("SELECT catalogs.subtree_filter(%s, NULL)", (SCOPE,)).fetchone()
    assert scope is not None
    return {"filter": scope[0], "filter-lang": "cql2-json"}


def _p50_ms(client: httpx.Client, path: str, body: dict[str, Any]) -> tuple[float, list[str]]:
    for _ in range(10):  # warm-up
        client.post(path, json=body).raise_for_status()
    timings = []
    for _ in range(100):
        started = time.perf_counter()
        answer = client.post(path, json=body)
        timings.append((time.perf_counter() - started) * 1000)
    answer.raise_for_status()
    return statistics.median(timings), [f["id"] for f in answer.json()["features"]]


def scoped_search(dsn: str, running: Running) -> dict[str, Any]:
    """A search limited to a subtree against the same search with the subtree's filter
    spelled out, 100 items a page, sequential (run after `catalog_tree`)."""
    plain = _link_scope(dsn)
    with httpx.Client(base_url=running.url, timeout=60) as client:
        scoped_ms, scoped_ids = _p50_ms(client, f"/catalogs/{SCOPE}/_search", {"limit": 100})
        plain_ms, plain_ids = _p50_ms(client, "/search", {**plain, "limit": 100})
    return {"item_links": ITEM_LINKS, "collection_links": len(dataset.COLLECTIONS) - 1,
            "scoped_p50_ms": scoped_ms, "plain_p50_ms": plain_ms,
            "ratio": scoped_ms / plain_ms, "same_items": scoped_ids == plain_ids}


def since_created_ms(job: dict[str, Any], until: str) -> float:
    """The job record's `created` to its `until` time (`started`, `finished`), in ms."""
    created = datetime.fromisoformat(job["created"])
    return (datetime.fromisoformat(job[until]) - created).total_seconds() * 1000


def delay_ms(job: dict[str, Any]) -> float:
    """accepted -> running."""
    return since_created_ms(job, "started")


def done_ms(job: dict[str, Any]) -> float:
    """submitted -> successful."""
    return since_created_ms(job, "finished")


def echo_jobs(dsn: str, running: Running, token: str, count: int,
              clients: int = 50) -> dict[str, Any]:
    return asyncio.run(_echo_jobs(dsn, running.url.removesuffix("/data") + "/processes",
                                  token, count, clients))


async def _echo_jobs(dsn: str, base: str, token: str, count: int,
                     clients: int) -> dict[str, Any]:
    """`count` executions submitted at once by `clients` concurrent clients (each its own
    connection, one request after the other: aiohttp, lighter than httpx, so that the
    client is not what is measured); then wait until every one is final; then jobs one at
    a time on the idle worker."""
    headers = {"Authorization": f"Bearer {token}", "Prefer": "respond-async"}
    latencies: list[float] = []
    ids: set[str] = set()

    async def client(first: int) -> None:
        async with aiohttp.ClientSession(headers=headers,
                                         connector=aiohttp.TCPConnector(limit=1)) as session:
            for n in range(first, count, clients):
                started = time.perf_counter()
                async with session.post(f"{base}/processes/echo/execution",
                                        json={"inputs": {"message": f"job {n}"}}) as answer:
                    answer.raise_for_status()
                    ids.add((await answer.json())["jobID"])
                latencies.append((time.perf_counter() - started) * 1000)

    began = time.perf_counter()
    await asyncio.gather(*(client(first) for first in range(clients)))
    # Until every job is final: a count in the database, every 50 ms (reading 1,000 job
    # records through the API every time would load the very machine being measured).
    deadline = time.monotonic() + 900
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = await (await conn.execute(
                "SELECT count(*) FROM processes.jobs WHERE id = ANY(%s::uuid[]) "
                "AND status IN ('successful', 'failed')", (list(ids),))).fetchone()
            if row and row[0] >= len(ids):
                break
            await asyncio.sleep(0.05)
    all_done = time.perf_counter() - began
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as http:
        final: dict[str, dict[str, Any]] = {}
        offset = 0
        while True:
            page = (await http.get("/jobs", params={
                "processID": "echo", "limit": 1000, "offset": offset,
                "status": "successful,failed"})).json()
            for job in page["jobs"]:
                if job["jobID"] in ids:
                    final[job["jobID"]] = job
            if not any(link["rel"] == "next" for link in page["links"]):
                break
            offset += 1000
        idle = [await _one_job(http) for _ in range(20)]

    successful = [j for j in final.values() if j["status"] == "successful"]
    return {
        "submitted": len(ids),
        "clients": clients,
        "submit_p50_ms": statistics.median(latencies),
        "submit_p95_ms": statistics.quantiles(latencies, n=20)[-1],
        "queued_p50_ms": statistics.median(delay_ms(j) for j in successful)
        if successful else float("nan"),
        "queued_p95_ms": statistics.quantiles([delay_ms(j) for j in successful], n=20)[-1]
        if len(successful) > 1 else float("nan"),
        "successful": len(successful),
        "failed": len(final) - len(successful),
        "lost": len(ids) - len(final),
        "all_done_s": all_done,
        "idle_queued_p50_ms": statistics.median(delay_ms(j) for j in idle),
        "idle_done_p50_ms": statistics.median(done_ms(j) for j in idle),
    }


async def _one_job(client: httpx.AsyncClient) -> dict[str, Any]:
    """One job on an idle worker, followed until it is final."""
    answer = await client.post("/processes/echo/execution", json={"inputs": {"message": "1"}})
    answer.raise_for_status()
    location = answer.headers["Location"]
    while True:
        job = (await client.get(location)).json()
        if job["status"] in ("successful", "failed", "dismissed"):
            return job
        await asyncio.sleep(0.05)
