"""The variables tree at the CF set's size: 5,000 collections, named by the first 5,000
standard names of the CF table the service ships (so that the shipped families' rules
place them as they place real ones), each holding items (the CF set's uneven spread, fewer
items: the tree reads collections, not items), on a cluster of PostgreSQL's defaults.

    .venv/bin/python -m tests.bench.cf_families [--collections 5000] [--items 50000]
        [--walks 20]

(also run by `make bench`, after the CF set). What it measures, one request at a time as
pystac-client and STAC Browser walk it: the whole tree (`/data/catalogs/variables`, each
family, each sub-family: every catalog once, each collection link followed no further),
against one `/data/collections` page read (its default page) per family. The medians of
`--walks` walks and as many page reads.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import httpx
import psycopg
import typer

from stac_ext.governance.tables import read_table, shipped_cf_table
from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.database.migrations import migrate
from tests.bench import cf_dataset, database, servers
from tests.bench.cf_scale import _command, _database_dsn

PORT = 8097


def _names(collections: int) -> list[str]:
    names = sorted(e.name.lower() for e in read_table(shipped_cf_table()).entries)
    return names[:collections]


def _write(folder: Path, collections: int, items: int) -> list[Path]:
    """The collections and their items as ndjson (each collection's id a CF name)."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"climate_forecast-{name}" for name in _names(collections)]
    with (folder / "collections.ndjson").open("w") as out:
        for n, cid in enumerate(ids):
            out.write(json.dumps({**cf_dataset.collection(n), "id": cid}) + "\n")
    rng = random.Random(13)
    path = folder / "items.ndjson"
    with path.open("w") as out:
        n = 0
        for c, count in enumerate(cf_dataset.counts(collections, items)):
            for _ in range(count):
                item = cf_dataset.item(rng, c, n)
                item.update(collection=ids[c], id=f"{ids[c]}-{n:07d}")
                out.write(json.dumps(item) + "\n")
                n += 1
    return [path]


def prepare(cluster: Cluster, data_dir: Path, collections: int, items: int) -> str:
    """The tree's database, made and loaded once (kept while its shape is the same)."""
    name = f"cf_families_{collections}x{items}"
    dsn = _database_dsn(cluster.dsn, name)
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        kept = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                            (name,)).fetchone() is not None
        if not kept:
            conn.execute(f'CREATE DATABASE "{name}"')
    migrate(dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    if not kept:
        folder = data_dir / "files" / name
        print(f"writing {collections} CF-named collections, {items} items ...", flush=True)
        files = _write(folder, collections, items)
        cli = [sys.executable, "-m", "stac_ext.cli", "load"]
        _command([*cli, str(folder / "collections.ndjson")], dsn)
        for f in files:
            _command([*cli, str(f), "--workers", "2"], dsn)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
    return dsn


def walk(client: httpx.Client, root: str) -> tuple[float, int, int]:
    """Every catalog of the tree read once, one at a time: (seconds, catalogs, families)."""
    started = time.perf_counter()
    queue, seen, families = [root], 0, 0
    while queue:
        url = queue.pop(0)
        r = client.get(url)
        r.raise_for_status()
        seen += 1
        children = [link["href"] for link in r.json()["links"]
                    if link["rel"] == "child" and "/catalogs/" in link["href"]]
        if url == root:
            families = len(children)
        queue += children
    return time.perf_counter() - started, seen, families


def run(data_dir: Path, *, collections: int = 5_000, items: int = 50_000, walks: int = 20,
        pg_port: int = 5451, port: int = PORT) -> dict[str, Any]:
    data_dir = data_dir.resolve() / "cf"
    data_dir.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(datadir=data_dir / "pg", port=pg_port, settings={})  # PG's defaults
    cluster.start()
    dsn = prepare(cluster, data_dir, collections, items)
    with servers.serving(servers.peers(dsn, data_dir)["geocatalog"], port) as running, \
            httpx.Client(timeout=60) as client:
        root = f"{running.url}/catalogs/variables"
        page = f"{running.url}/collections"
        walk(client, root)  # warm: the first reads plan the statements
        client.get(page).raise_for_status()
        timed = [walk(client, root) for _ in range(walks)]
        pages = []
        for _ in range(walks):
            started = time.perf_counter()
            client.get(page).raise_for_status()
            pages.append(time.perf_counter() - started)
        listed = client.get(page).json()
    database.end_sessions(dsn)
    walk_ms = statistics.median(t for t, _, _ in timed) * 1000
    page_ms = statistics.median(pages) * 1000
    _, catalogs, families = timed[0]
    return {"collections": collections, "items": items, "walks": walks,
            "catalogs": catalogs, "families": families,
            "collections_page": len(listed["collections"]),
            "walk_ms": round(walk_ms, 1), "per_catalog_ms": round(walk_ms / catalogs, 2),
            "collections_page_ms": round(page_ms, 2),
            "one_page_per_family_ms": round(page_ms * families, 1)}


def table(f: dict[str, Any]) -> str:
    within = f["walk_ms"] < f["one_page_per_family_ms"]
    return "\n".join([
        f"variables tree: {f['collections']} CF-named collections ({f['items']} items), "
        f"{f['families']} families, {f['catalogs']} catalogs; medians of {f['walks']}",
        "| read | ms |", "|---|---|",
        f"| the whole tree, one catalog at a time | {f['walk_ms']} "
        f"({f['per_catalog_ms']} a catalog) |",
        f"| one /collections page ({f['collections_page']} collections) | "
        f"{f['collections_page_ms']} |",
        f"| one /collections page per family ({f['families']}) | "
        f"{f['one_page_per_family_ms']} |",
        f"walking the whole tree costs {f['walk_ms'] / f['one_page_per_family_ms']:.2f} of one "
        f"/collections page per family: {'within' if within else 'NOT within'} the bound"])


app = typer.Typer(add_completion=False)


@app.command()
def main(
    collections: Annotated[int, typer.Option(help="CF-named collections")] = 5_000,
    items: Annotated[int, typer.Option(help="items over them (each holds one at least)")]
        = 50_000,
    walks: Annotated[int, typer.Option(help="walks measured (and page reads)")] = 20,
    data_dir: Annotated[Path, typer.Option(help="clusters and results")] = Path(".bench"),
    pg_port: Annotated[int, typer.Option(help="the CF cluster's port")] = 5451,
    port: Annotated[int, typer.Option(help="the service's port")] = PORT,
) -> None:
    results = run(data_dir, collections=collections, items=items, walks=walks,
                  pg_port=pg_port, port=port)
    out = data_dir.resolve() / "cf" / "families-results.json"
    out.write_text(json.dumps(results, indent=2))
    print()
    print(table(results))
    print(f"\nraw figures: {out}")


if __name__ == "__main__":
    app()
