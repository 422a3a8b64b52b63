"""Full speed from the first second: an items page's p50 as soon as a server answers after a
bulk change, against its p50 once the database has settled (`VACUUM ANALYZE`, what
autovacuum does in its own time), on the main set (`dataset`):

1. `geocatalog migrate` of a plain pgstac database holding the set (the documented upgrade
   path; its batched steps fill the search index);
2. `pypgstac load` of the set into a database `geocatalog migrate` made (the index's
   triggers fill it as the items arrive).

Each side starts a server of its own (the same cold start), measured without warm-up.
Target: the first p50 within 1.2x of the settled one.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psycopg

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.database.migrations import migrate
from tests.bench import cf_scale, database, scenarios, servers, visibility, wrk

SCENARIO = "items limit=10"


def _p50(dsn: str, data_dir: Path, port: int, seconds: float, connections: int,
         items: int) -> dict[str, Any]:
    """A new server's figures on `dsn`, from its first request."""
    server = servers.geocatalog("geocatalog", dsn, data_dir)
    requests = scenarios.requests(SCENARIO, items, geocatalog=True)
    with servers.serving(server, port) as running:
        figures = wrk.run(running.url, requests, seconds=seconds, connections=connections,
                          tag=f"fresh-{int(time.time())}")
    database.end_sessions(dsn)
    return figures.as_dict()


def _first_and_settled(dsn: str, changed: float, data_dir: Path, port: int, seconds: float,
                       connections: int, items: int) -> dict[str, Any]:
    first = {**_p50(dsn, data_dir, port, seconds, connections, items),
             "after_s": round(time.monotonic() - changed, 1)}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    settled = _p50(dsn, data_dir, port, seconds, connections, items)
    return {"first": first, "settled": settled,
            "ratio_p50": round(first["p50_ms"] / settled["p50_ms"], 2)}


def run(cluster: Cluster, data_dir: Path, port: int, items: int, *, seconds: float = 5,
        connections: int = 8) -> dict[str, Any]:
    """Both cases' figures (`cluster`: the benchmark's, `items`: the main set's size)."""
    folder = data_dir / "main-set"
    files = visibility.main_set_files(folder, items)
    plain = visibility.plain_database(cluster, f"main_plain_{items}", folder, files)
    found: dict[str, Any] = {}
    dsn = visibility.clone(cluster, plain, "fresh_migrate")
    print("geocatalog migrate of a plain pgstac copy ...", flush=True)
    migrate(dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    found["migrate"] = _first_and_settled(dsn, time.monotonic(), data_dir, port, seconds,
                                          connections, items)
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute('DROP DATABASE IF EXISTS "fresh_load"')
        conn.execute('CREATE DATABASE "fresh_load"')
    dsn = cf_scale._database_dsn(cluster.dsn, "fresh_load")
    migrate(dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    print("pypgstac load into a migrated database ...", flush=True)
    cf_scale._pypgstac_load(dsn, folder, files)
    found["pypgstac load"] = _first_and_settled(dsn, time.monotonic(), data_dir, port,
                                                seconds, connections, items)
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        for name in ("fresh_migrate", "fresh_load"):
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
    return found
