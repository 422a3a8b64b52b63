"""The benchmark's own database: an embedded cluster, migrated, loaded once with the data set."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import psycopg

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.database.loader import load
from stac_ext.platform.database.migrations import migrate
from tests.bench import dataset


def prepare(data_dir: Path, port: int, total_items: int) -> str:
    """Start (and first create) the cluster, migrate, load the data set, empty what earlier
    runs wrote or queued; the DSN."""
    cluster = Cluster(datadir=data_dir / "pg", port=port)
    cluster.start()
    dsn = cluster.dsn
    migrate(dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    with psycopg.connect(dsn, autocommit=True) as conn:
        count = conn.execute("SELECT count(*) FROM pgstac.items WHERE collection = ANY(%s)",
                             (list(dataset.COLLECTIONS),)).fetchone()
        loaded = count is not None and count[0] == total_items
        if not loaded:
            conn.execute("DELETE FROM pgstac.collections WHERE id LIKE 'bench-%'")
    if not loaded:
        print(f"loading {total_items} items into {data_dir / 'pg'} ...", flush=True)
        started = time.monotonic()
        collections = [dataset.collection(c) for c in (*dataset.COLLECTIONS, dataset.WRITES)]
        load(dsn, collections, dataset.items(total_items))
        print(f"loaded in {time.monotonic() - started:.0f} s", flush=True)
    reset_writes(dsn)
    # jobs an interrupted run left queued would be run by the in-process worker of the
    # server under read load, and be measured as part of its reads
    reset_jobs(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    return dsn


def reset_writes(dsn: str) -> None:
    """Empty the collection POST item writes to (so every run starts alike)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM pgstac.items WHERE collection = %s", (dataset.WRITES,))


def end_sessions(dsn: str) -> None:
    """End what a stopped server left running in the database: PostgreSQL runs a query to
    its end after its client has gone, and a peer's minutes-long searches (and the locks
    they hold) would be measured as part of the next server's. Those locks can fill the
    lock table of a cluster at PostgreSQL's defaults until no session can even start (out
    of shared memory): connecting and ending them are tried again until they end, for a few
    minutes."""
    for attempt in range(180):
        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                             "AND backend_type = 'client backend'")
            return
        except psycopg.OperationalError as e:
            if "out of shared memory" not in str(e) or attempt == 179:
                raise
            time.sleep(1)


def reset_jobs(dsn: str) -> None:
    """No job of an earlier run left: none queued ahead of this run's (an interrupted run's),
    none for the final job listing to page through (kept, they grew to 190,000 records and
    about 20 s of database time a run). Run while no server or worker is up."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE processes.jobs, procrastinate.procrastinate_jobs CASCADE")


def search_floor(dsn: str, bodies: list[dict[str, object]], *, as_geocatalog: bool,
                 repeat: int = 30) -> float:
    """p50 ms of pgstac's own `search()` for these bodies, one connection, result as text:
    as stock calls it (hydrated in the database), or as geocatalog does (no hydration, no
    parallel workers)."""
    timings = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        if as_geocatalog:
            conn.execute("SET max_parallel_workers_per_gather = 0")
            bodies = [{**body, "conf": {"nohydrate": True}} for body in bodies]
        for _ in range(repeat):
            for body in bodies:
                started = time.perf_counter()
                conn.execute("SELECT search(%s::text::jsonb)::text",
                             (json.dumps(body),)).fetchone()
                timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)
