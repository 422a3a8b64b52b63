"""Prometheus metrics: what `/metrics` says after real requests and real jobs, read as
Prometheus reads it (its text format, prometheus-client's parser)."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.support.jobs import execute, wait_for
from tests.support.stac import make_item


async def scrape(client: httpx.AsyncClient) -> dict[tuple[str, frozenset], float]:
    """Every sample of `/metrics`: (name, labels) -> value."""
    r = await client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=")
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(r.text) for s in family.samples}


def value(samples: dict[tuple[str, frozenset], float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_requests_by_route_template_and_status_class(anon, alice_data, collection):
    item = "/data/collections/{collection_id}/items/{item_id}"
    before = await scrape(anon)
    for n in range(3):
        r = await alice_data.post(f"/data/collections/{collection}/items",
                                  json=make_item(f"m-{n}"))
        assert r.status_code == 201
    for n in range(3):
        assert (await anon.get(f"/data/collections/{collection}/items/m-{n}")).status_code \
            == 200
    assert (await anon.get(f"/data/collections/{collection}/items/none")).status_code == 404
    assert (await anon.get("/no/such/path")).status_code == 404
    assert (await anon.get("/processes/processes/no-such")).status_code == 401
    after = await scrape(anon)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    counted = "geocatalog_http_requests_total"
    assert grew(counted, method="GET", route=item, status="2xx") == 3
    assert grew(counted, method="GET", route=item, status="4xx") == 1
    assert grew(counted, method="POST", route="/data/collections/{collection_id}/items",
                status="2xx") == 3
    assert grew(counted, method="GET", route="<unmatched>", status="4xx") == 1
    # the mounted process API's routes carry its mount
    assert grew(counted, method="GET", route="/processes/processes/{process_id}",
                status="4xx") == 1
    assert grew("geocatalog_http_request_duration_seconds_count", method="GET", route=item,
                status="2xx") == 3
    # never a raw path: no series names an item
    assert not [k for k in after if any("m-1" in v for _, v in k[1])]


async def test_pools_and_items_kept_as_served(anon, alice_data, collection):
    r = await alice_data.post(f"/data/collections/{collection}/items", json=make_item("kept"))
    assert r.status_code == 201
    before = await scrape(anon)
    for _ in range(4):  # rendered once, then served as kept
        r = await anon.get(f"/data/collections/{collection}/items/kept")
        assert r.status_code == 200
    after = await scrape(anon)
    hits = "geocatalog_rendered_items_hits_total"
    misses = "geocatalog_rendered_items_misses_total"
    assert value(after, hits) - value(before, hits) == 3
    assert value(after, misses) - value(before, misses) == 1
    assert value(after, "geocatalog_rendered_items_bytes") > 0
    for pool in ("reader", "writer", "jobs", "queue"):
        assert value(after, "geocatalog_db_pool_max_connections", pool=pool) >= 1
        assert ("geocatalog_db_pool_connections",
                frozenset({"pool": pool, "state": "idle"}.items())) in after
        assert value(after, "geocatalog_db_pool_waiting_requests", pool=pool) == 0


async def test_jobs_started_ended_and_their_queue(anon, alice_processes):
    before = await scrape(anon)
    ok = await execute(alice_processes, "echo", {"message": "hi"})
    failed = await execute(alice_processes, "test-fail", {"token": "s3cret-token"})
    assert (await wait_for(alice_processes, ok.headers["Location"], "successful"))[
        "status"] == "successful"
    assert (await wait_for(alice_processes, failed.headers["Location"], "failed"))[
        "status"] == "failed"
    after = await scrape(anon)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("geocatalog_jobs_started_total", process="echo") == 1
    assert grew("geocatalog_jobs_ended_total", process="echo", status="successful") == 1
    assert grew("geocatalog_jobs_ended_total", process="test-fail", status="failed") == 1
    assert grew("geocatalog_job_duration_seconds_count", process="echo",
                status="successful") == 1
    assert "s3cret-token" not in (await anon.get("/metrics")).text
