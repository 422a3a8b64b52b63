"""Full speed from the first second: an items page's p50 as soon as a server answers after a
bulk change, against its p50 once the database has settled (`VACUUM ANALYZE`, what
autovacuum does in its own time), on the main set (`dataset`):

1. `geocatalog migrate` of a plain pgstac database holding the set (the documented upgrade
   path; its batched steps fill the search index);
2. `pypgstac load` of the set into a database `geocatalog migrate` made (the index's
   triggers fill it as the items arrive).

The first figures come from a server started before the load (right after it returns) or,
after `migrate`, as soon as a server started on the migrated schema answers; the settled
ones from a new server; no warm-up. Each case `rounds` times: the median of their ratios.
Target: the first p50 within 1.2x of the settled one.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.database.migrations import migrate
from tests.bench import cf_scale, database, scenarios, servers, visibility, wrk

SCENARIO = "items limit=10"


def _p50(dsn: str, data_dir: Path, port: int, seconds: float, connections: int,
         items: int, *, since: float | None = None,
         change: Callable[[], object] | None = None) -> dict[str, Any]:
    """A new server's figures on `dsn`, from its first request; `change`: made once it
    serves, and measured from then (`after_s`: from it, or from `since`, to the first
    request)."""
    server = servers.geocatalog("geocatalog", dsn, data_dir)
    requests = scenarios.requests(SCENARIO, items, geocatalog=True)
    with servers.serving(server, port) as running:
        if change is not None:
            change()
            since = time.monotonic()
        after = None if since is None else round(time.monotonic() - since, 1)
        figures = wrk.run(running.url, requests, seconds=seconds, connections=connections,
                          tag=f"fresh-{int(time.time())}")
    database.end_sessions(dsn)
    return {**figures.as_dict(), "after_s": after}


def _first_and_settled(first: dict[str, Any], dsn: str, data_dir: Path, port: int,
                       seconds: float, connections: int, items: int) -> dict[str, Any]:
    """`first` against the figures once the database has settled."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    settled = _p50(dsn, data_dir, port, seconds, connections, items)
    return {"first": first, "settled": settled,
            "ratio_p50": round(first["p50_ms"] / settled["p50_ms"], 2)}


def _after_migrate(cluster: Cluster, plain: str, data_dir: Path, port: int, seconds: float,
                   connections: int, items: int) -> dict[str, Any]:
    dsn = visibility.clone(cluster, plain, "fresh_migrate")
    migrate(dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    # a server starts once the schema is there: the first request comes after its start
    first = _p50(dsn, data_dir, port, seconds, connections, items, since=time.monotonic())
    return _first_and_settled(first, dsn, data_dir, port, seconds, connections, items)


def _after_load(cluster: Cluster, folder: Path, files: list[Path], data_dir: Path, port: int,
                seconds: float, connections: int, items: int) -> dict[str, Any]:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute('DROP DATABASE IF EXISTS "fresh_load"')
        conn.execute('CREATE DATABASE "fresh_load"')
    dsn = cf_scale._database_dsn(cluster.dsn, "fresh_load")
    migrate(dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    first = _p50(dsn, data_dir, port, seconds, connections, items,
                 change=lambda: cf_scale._pypgstac_load(dsn, folder, files))
    return _first_and_settled(first, dsn, data_dir, port, seconds, connections, items)


def run(cluster: Cluster, data_dir: Path, port: int, items: int, *, seconds: float = 5,
        connections: int = 8, rounds: int = 3) -> dict[str, Any]:
    """Both cases' figures, `rounds` times each, and the median of their ratios (`cluster`:
    the benchmark's, `items`: the main set's size)."""
    folder = data_dir / "main-set"
    files = visibility.main_set_files(folder, items)
    plain = visibility.plain_database(cluster, f"main_plain_{items}", folder, files)
    found: dict[str, Any] = {"migrate": {"rounds": []}, "pypgstac load": {"rounds": []}}
    for n in range(rounds):
        print(f"round {n + 1} of {rounds}: geocatalog migrate, then pypgstac load ...",
              flush=True)
        found["migrate"]["rounds"].append(_after_migrate(
            cluster, plain, data_dir, port, seconds, connections, items))
        found["pypgstac load"]["rounds"].append(_after_load(
            cluster, folder, files, data_dir, port, seconds, connections, items))
    for case in found.values():
        case["ratio_p50"] = statistics.median(r["ratio_p50"] for r in case["rounds"])
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        for name in ("fresh_migrate", "fresh_load"):
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
    return found
