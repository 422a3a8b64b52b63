"""Writes with synchronous replication against one server: POST item (wrk) and echo jobs
(submitted by 50 clients at once, each a user of its own, one `geocatalog worker
--concurrency 4` running them) on a Patroni cluster of three members on this machine
(`synchronous_mode`: a commit waits until a standby has it) and on one PostgreSQL with the
members' settings; req/s, jobs/s and their ratios (a report, no target). Both on this one
machine: the standbys' replay takes cores the primary would have to itself on machines of
their own, and loopback has no network latency, which a commit on real machines waits for
once more.

    .venv/bin/python -m tests.bench.synchronous [--seconds 15]
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import aiohttp
import psycopg
import typer
from psycopg.types.json import Jsonb

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.database.migrations import migrate
from stac_ext.platform.database.patroni_cluster import PatroniCluster
from tests.bench import dataset, scenarios, servers, wrk
from tests.support.http import free_port

app = typer.Typer(add_completion=False)
PORT = 8099
#: Echo jobs submitted, by how many clients at once (each a user of its own: one user's
#: jobs run at most `JOB_USER_RUNNING` at a time), and the job engine's topology (as
#: `make bench`'s jobs).
ECHO_JOBS, CLIENTS, JOB_WORKERS, JOB_CONCURRENCY = 500, 50, 1, 4
#: What the single server changes from PostgreSQL's defaults: what the members have,
#: replication and archiving aside.
SINGLE = {"max_connections": "200", "wal_log_hints": "on"}


@contextmanager
def single_server(folder: Path, port: int) -> Iterator[str]:
    cluster = Cluster(datadir=folder / "pg", port=port, settings=SINGLE)
    cluster.start()
    try:
        yield cluster.dsn
    finally:
        cluster.stop()


@contextmanager
def synchronous_cluster(folder: Path, port: int) -> Iterator[str]:
    cluster = PatroniCluster(folder / "ha", synchronous=True)
    cluster.start()
    try:
        yield cluster.url()
    finally:
        cluster.stop()


def _prepared(dsn: str) -> None:
    migrate(dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pgstac.create_collection(%s)",
                     (Jsonb(dataset.collection(dataset.WRITES)),))


def measure(folder: Path, dsn: str, seconds: float, warmup: float, connections: int,
            jobs: int) -> dict[str, Any]:
    """POST item and echo jobs on the database of `dsn` (its data and keys in `folder`)."""
    _prepared(dsn)
    settings, issuer = servers.local_issuer(dsn, folder)
    token = servers.writer_token(settings, issuer)
    requests = scenarios.requests("POST item", 0, True)
    with servers.serving(servers.geocatalog("geocatalog", dsn, folder), PORT) as running:
        wrk.run(running.url, requests, seconds=warmup, connections=connections, token=token,
                tag="sync-w")
        figures = wrk.run(running.url, requests, seconds=seconds, connections=connections,
                          token=token, tag="sync-m")
    service = servers.job_service(dsn, folder)
    with servers.serving(service, PORT) as running, servers.job_workers(
            service, JOB_WORKERS, JOB_CONCURRENCY):
        echo = asyncio.run(_echo_jobs(dsn, running.url.removesuffix("/data") + "/processes",
                                      issuer, settings.process_client_id, jobs))
    return {"post_item": figures.as_dict(), "jobs": echo}


async def _echo_jobs(dsn: str, base: str, issuer: LocalIssuer, client_id: str,
                     count: int) -> dict[str, Any]:
    """`count` echo jobs, submitted by CLIENTS clients at once, each one after the other
    (aiohttp: the client is not what is measured); then until every one has ended."""
    latencies: list[float] = []
    ids: list[str] = []

    async def client(n: int) -> None:
        token = issuer.mint(f"bench-sync-{n}", client_id, [], [], 3600)
        async with aiohttp.ClientSession(
                headers={"Authorization": f"Bearer {token}"},
                connector=aiohttp.TCPConnector(limit=1)) as session:
            for job in range(n, count, CLIENTS):
                started = time.perf_counter()
                async with session.post(f"{base}/processes/echo/execution",
                                        json={"inputs": {"message": f"job {job}"}}) as answer:
                    answer.raise_for_status()
                    ids.append((await answer.json())["jobID"])
                latencies.append((time.perf_counter() - started) * 1000)

    began = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(CLIENTS)))
    submitted = time.perf_counter() - began
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while True:
            row = await (await conn.execute(
                "SELECT count(*) FILTER (WHERE status = 'successful'), count(*) FROM "
                "processes.jobs WHERE id = ANY(%s::uuid[]) AND finished IS NOT NULL",
                (ids,))).fetchone()
            assert row is not None
            if row[1] >= len(ids):
                break
            await asyncio.sleep(0.05)
    done = time.perf_counter() - began
    return {"submitted": len(ids), "successful": row[0],
            "submit_p50_ms": round(statistics.median(latencies), 1),
            "submitted_per_s": round(len(ids) / submitted, 1),
            "all_done_s": round(done, 1), "jobs_per_s": round(len(ids) / done, 1)}


def run(data_dir: Path, seconds: float = 15, warmup: float = 3, connections: int = 8,
        jobs: int = ECHO_JOBS) -> dict[str, Any]:
    """Both setups, one after the other, each in a fresh folder under `data_dir`."""
    results: dict[str, Any] = {}
    for label, setup in (("single", single_server), ("synchronous", synchronous_cluster)):
        folder = data_dir / f"synchronous-bench-{label}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        folder.chmod(0o755)
        with setup(folder, free_port()) as dsn:
            results[label] = measure(folder, dsn, seconds, warmup, connections, jobs)
        shutil.rmtree(folder, ignore_errors=True)
        print(line(label, results[label]), flush=True)
    one, sync = results["single"], results["synchronous"]
    results["ratio"] = {
        "post_item_rps": round(sync["post_item"]["rps"] / one["post_item"]["rps"], 3),
        "post_item_p50": round(sync["post_item"]["p50_ms"] / one["post_item"]["p50_ms"], 3),
        "jobs_per_s": round(sync["jobs"]["jobs_per_s"] / one["jobs"]["jobs_per_s"], 3),
        "jobs_submitted_per_s": round(sync["jobs"]["submitted_per_s"]
                                      / one["jobs"]["submitted_per_s"], 3)}
    return results


def line(label: str, figures: dict[str, Any]) -> str:
    post, jobs = figures["post_item"], figures["jobs"]
    return (f"{label:12} POST item {post['rps']:7.1f} req/s p50 {post['p50_ms']:6.1f} ms; "
            f"{jobs['submitted']} echo jobs: submitted at {jobs['submitted_per_s']} jobs/s "
            f"(p50 {jobs['submit_p50_ms']:.0f} ms), all done in {jobs['all_done_s']:.1f} s "
            f"({jobs['jobs_per_s']} jobs/s, {jobs['successful']} successful)")


def table(results: dict[str, Any]) -> str:
    ratio = results["ratio"]
    return "\n".join([
        line("single", results["single"]), line("synchronous", results["synchronous"]),
        f"synchronous / single: POST item {ratio['post_item_rps']:.2f}x req/s (p50 "
        f"{ratio['post_item_p50']:.2f}x), jobs {ratio['jobs_per_s']:.2f}x jobs/s (submitted "
        f"{ratio['jobs_submitted_per_s']:.2f}x jobs/s)"])


@app.command()
def main(
    seconds: Annotated[float, typer.Option(help="measured seconds of POST item")] = 15,
    warmup: Annotated[float, typer.Option(help="warm-up seconds")] = 3,
    connections: Annotated[int, typer.Option(help="concurrent connections")] = 8,
    jobs: Annotated[int, typer.Option(help="echo jobs submitted at once")] = ECHO_JOBS,
    data_dir: Annotated[Path, typer.Option(help="where the databases live")] = Path(".bench"),
) -> None:
    data_dir = data_dir.resolve()
    results = run(data_dir, seconds, warmup, connections, jobs)
    (data_dir / "synchronous.json").write_text(json.dumps(results, indent=2))
    print(table(results))


if __name__ == "__main__":
    app()
