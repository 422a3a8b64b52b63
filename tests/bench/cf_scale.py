"""The CF-scale benchmark: one collection per CF standard name (5,000), 1,000,000 items spread
unevenly over them (`cf_dataset`), on a cluster of PostgreSQL's defaults.

    .venv/bin/python -m tests.bench.cf_scale [--items 1000000] [--collections 5000]
        [--curve 10 --curve 100 --curve 1000] [--seconds 10]

(also run by `make bench`, after the main scenarios). What it measures:

- Loading: `geocatalog load` of the item files into a migrated database (search index and
  triggers in place) against `pypgstac load` of the same files into a plain pgstac
  database, items/s (each file a command, as an operator runs them).
- Reads: stock stac-fastapi-pgstac, rustac and geocatalog in turn on the same database, the
  errors of each counted (an error answered fast is not a fast answer: the table shows
  successful requests per second).
- The cost curve: the same cross-collection searches on databases holding the same items in
  10, 100, 1,000 and 5,000 collections.
- Finding data at the largest shape: free text (`q`) and aggregations (`/aggregate`, the
  facets of a search), geocatalog's only, beside the plain searches they refine.

Each shape's database is loaded once and kept in the benchmark's data folder while its
shape is the same (the load figures of that first load are kept beside it).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import httpx
import psycopg
import typer

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.database.migrations import migrate
from tests.bench import cf_dataset, database, servers, wrk

PORT = 8098
#: Items of the CF set `make bench` loads and reads (every shape of its cost curve).
ITEMS = 1_000_000
SERVERS = ("stock", "rustac", "geocatalog")
#: Searches across every collection: the cost curve's scenarios.
CROSS = ("GET /search bbox+datetime limit=100", "GET /search limit=100",
         "GET /search CQL2 owner limit=100")
#: Reads of one collection or item, at the largest shape only.
WITHIN = ("items limit=100", "single item")
#: Finding data (geocatalog only: stock has no item free text nor aggregation, and would
#: ignore `q`), beside the plain search it refines: words, and the facets of a search.
#: (the CF set's words: its variables' numbers, "climate", "forecast", "variable")
DISCOVERY = ("GET /search q=<variable number> limit=100", "GET /search q=forecast limit=100",
             "GET /aggregate bbox+datetime (count, variables, years)",
             "GET /aggregate q=<variable number> (count, months, platforms)",
             "GET /aggregate (count, variables, years): the landing page's")
FACETS = "total_count,collection_frequency,datetime_yearly_frequency"


def _windows(count: int = 16, seed: int = 29) -> list[tuple[str, str]]:
    """Bounding boxes of 40x30 degrees and two-year windows: a few thousand matches of a
    million items, spread over the variables."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        west, south = rng.uniform(-175, 130), rng.uniform(-80, 45)
        year = rng.randrange(cf_dataset.START.year, cf_dataset.START.year + 24)
        out.append((f"{west:.3f},{south:.3f},{west + 40:.3f},{south + 30:.3f}",
                    f"{year}-01-01T00:00:00Z/{year + 1}-12-31T23:59:59Z"))
    return out


def requests(name: str, collections: int, items: int) -> list[wrk.Request]:
    """Scenario `name` as every server spells it (the same CQL2 for all: stock and rustac
    have no `owner` parameter)."""
    if name == "GET /search bbox+datetime limit=100":
        return [wrk.Request("GET", "/search?" + urlencode(
            {"bbox": bbox, "datetime": when, "limit": 100})) for bbox, when in _windows()]
    if name == "GET /search limit=100":
        return [wrk.Request("GET", "/search?limit=100")]
    if name == "GET /search CQL2 owner limit=100":
        return [wrk.Request("GET", "/search?filter-lang=cql2-text&limit=100&filter="
                            + quote(f"owner = '{owner}'")) for owner in cf_dataset.OWNERS[:40]]
    rng = random.Random(31)
    numbers = [f"{n:05d}" for n in rng.sample(range(collections), min(40, collections))]
    if name == "GET /search q=<variable number> limit=100":
        return [wrk.Request("GET", f"/search?q={n}&limit=100") for n in numbers]
    if name == "GET /search q=forecast limit=100":
        return [wrk.Request("GET", "/search?q=forecast&limit=100")]
    if name == "GET /aggregate bbox+datetime (count, variables, years)":
        return [wrk.Request("GET", "/aggregate?" + urlencode(
            {"bbox": bbox, "datetime": when, "aggregations": FACETS}))
            for bbox, when in _windows()]
    if name == "GET /aggregate (count, variables, years): the landing page's":
        return [wrk.Request("GET", f"/aggregate?aggregations={FACETS}")]
    if name == "GET /aggregate q=<variable number> (count, months, platforms)":
        return [wrk.Request("GET", f"/aggregate?q={n}&aggregations=total_count,"
                            "datetime_frequency,platform_frequency") for n in numbers]
    counts = cf_dataset.counts(collections, items)
    if name == "items limit=100":  # collections picked as a person would: by their size
        picks = rng.choices(range(collections), weights=counts, k=60)
        return [wrk.Request("GET", f"/collections/{cf_dataset.collection_id(n)}/items?limit=100")
                for n in picks]
    if name == "single item":
        firsts = [0]
        for count in counts:
            firsts.append(firsts[-1] + count)
        out = []
        for n in rng.sample(range(items), 300):
            c = next(c for c in range(collections) if firsts[c + 1] > n)  # its collection
            cid = cf_dataset.collection_id(c)
            out.append(wrk.Request("GET", f"/collections/{cid}/items/"
                                   f"{cid.removeprefix('climate_forecast-')}-{n:07d}"))
        return out
    raise KeyError(name)


def _database_dsn(dsn: str, name: str) -> str:
    return urlunsplit(urlsplit(dsn)._replace(path=f"/{name}"))


@dataclass(frozen=True)
class Shape:
    collections: int
    items: int

    @property
    def name(self) -> str:
        return f"cf_{self.collections}x{self.items}"


def _command(args: list[str], dsn: str) -> float:
    """Seconds one loading command took (it must succeed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "DATABASE_URL"))}
    started = time.monotonic()
    out = subprocess.run(args, env={**env, "DATABASE_URL": dsn}, capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:4])} failed: {out.stderr.strip()[-500:]}")
    return time.monotonic() - started


def _geocatalog_load(dsn: str, folder: Path, files: list[Path], workers: int) -> float:
    """Seconds `geocatalog load` took for the item files (collections loaded first)."""
    cli = [sys.executable, "-m", "stac_ext.cli", "load"]
    _command([*cli, str(folder / "collections.ndjson")], dsn)
    return sum(_command([*cli, str(f), "--workers", str(workers)], dsn) for f in files)


def _pypgstac_load(dsn: str, folder: Path, files: list[Path]) -> float:
    """Seconds `pypgstac load items` took for the same files into plain pgstac."""
    pypgstac = str(Path(sys.executable).with_name("pypgstac"))
    _command([pypgstac, "migrate", "--dsn", dsn], dsn)
    _command([pypgstac, "load", "collections", str(folder / "collections.ndjson"),
              "--dsn", dsn, "--method", "insert"], dsn)
    return sum(_command([pypgstac, "load", "items", str(f), "--dsn", dsn, "--method",
                         "insert"], dsn) for f in files)


def prepare(cluster: Cluster, data_dir: Path, shape: Shape, *, compare_load: bool,
            workers: int) -> tuple[str, dict[str, Any]]:
    """The shape's database (made and loaded once) and the figures of its load."""
    dsn = _database_dsn(cluster.dsn, shape.name)
    figures_file = data_dir / f"{shape.name}.load.json"
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        kept = figures_file.exists() and conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (shape.name,)).fetchone() is not None
        if not kept:
            for name in (shape.name, f"{shape.name}_pypgstac"):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{shape.name}"')
    # a kept database too, as the main set's: this checkout's schema and functions
    migrate(dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    if kept:
        return dsn, json.loads(figures_file.read_text())
    folder = data_dir / "files" / shape.name
    print(f"writing {shape.items} items in {shape.collections} collections ...", flush=True)
    files = cf_dataset.write(folder, shape.collections, shape.items)
    figures: dict[str, Any] = {"items": shape.items, "collections": shape.collections}
    print(f"geocatalog load --workers {workers} into {shape.name} ...", flush=True)
    seconds = _geocatalog_load(dsn, folder, files, workers)
    figures["geocatalog_load"] = {"seconds": round(seconds, 1), "workers": workers,
                                  "items_per_s": round(shape.items / seconds)}
    if compare_load:
        plain = _database_dsn(cluster.dsn, f"{shape.name}_pypgstac")
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{shape.name}_pypgstac"')
        print("pypgstac load into plain pgstac ...", flush=True)
        seconds = _pypgstac_load(plain, folder, files)
        figures["pypgstac_load"] = {"seconds": round(seconds, 1),
                                    "items_per_s": round(shape.items / seconds)}
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{shape.name}_pypgstac"')
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        figures["database_mb"] = round(conn.execute(
            "SELECT pg_database_size(current_database())").fetchone()[0] / 2**20)  # type: ignore[index]
        figures["search_index_mb"] = round(conn.execute(
            "SELECT pg_total_relation_size('geocatalog.search_items')").fetchone()[0]  # type: ignore[index]
            / 2**20)
    figures_file.write_text(json.dumps(figures, indent=2))
    return dsn, figures


def measure(running: servers.Running, name: str, reqs: list[wrk.Request], seconds: float,
             warmup: float, connections: int) -> dict[str, Any]:
    tag = f"cf-{running.server.name}-{int(time.time())}"
    wrk.run(running.url, reqs, seconds=warmup, connections=connections, tag=tag + "w")
    figures = wrk.run(running.url, reqs, seconds=seconds, connections=connections, tag=tag)
    ok_rps = figures.ok_rps
    print(f"  {running.server.name:10} {name:38} {figures.rps:8.1f} req/s, ok {ok_rps:8.1f}/s, "
          f"p50 {figures.p50_ms:7.1f} ms, p95 {figures.p95_ms:7.1f} ms, "
          f"errors {figures.errors}", flush=True)
    return {**figures.as_dict(), "ok_rps": round(ok_rps, 1)}


def _same_answers(urls: dict[str, str], reqs: list[wrk.Request]) -> dict[str, Any]:
    """geocatalog's item ids against each peer's, where the peer answers at all."""
    verdict: dict[str, Any] = {}
    with httpx.Client(timeout=120) as client:
        for request in reqs[:6]:
            answers = {}
            for name, url in urls.items():
                r = client.get(url + request.path)
                if r.status_code == 200:
                    body = r.json()
                    answers[name] = ([f["id"] for f in body["features"]]
                                     if "features" in body else [body["id"]])
            for name, ids in answers.items():
                if name != "geocatalog" and "geocatalog" in answers:
                    slot = verdict.setdefault(name, {"compared": 0, "differ": 0})
                    slot["compared"] += 1
                    slot["differ"] += ids != answers["geocatalog"]
    return verdict


def serve_shape(dsn: str, data_dir: Path, shape: Shape, names: tuple[str, ...], *,
                seconds: float, warmup: float, connections: int,
                only: list[str] | None) -> dict[str, Any]:
    """Every scenario of `names` against each server in turn on the shape's database."""
    peers = servers.peers(dsn, data_dir)
    out: dict[str, Any] = {}
    print(f"{shape.name}:", flush=True)
    for server in SERVERS:
        if server not in peers or (only and server not in only):
            continue
        with servers.serving(peers[server], PORT) as running:
            out[server] = {name: measure(running, name, requests(
                name, shape.collections, shape.items), seconds, warmup, connections)
                for name in names}
        database.end_sessions(dsn)
    return out


def run(data_dir: Path, *, items: int = ITEMS, collections: int = 5_000,
        curve: tuple[int, ...] = (10, 100, 1_000), seconds: float = 10, warmup: float = 2,
        connections: int = 8, pg_port: int = 5451, workers: int = 2,
        only: list[str] | None = None) -> dict[str, Any]:
    """The CF-scale figures (loads, reads per server, the cost curve)."""
    data_dir = data_dir.resolve() / "cf"
    data_dir.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(datadir=data_dir / "pg", port=pg_port, settings={})  # PG's defaults
    cluster.start()
    main = Shape(collections, items)
    results: dict[str, Any] = {"shape": {"collections": collections, "items": items,
                                         "largest_collection": max(
                                             cf_dataset.counts(collections, items))},
                               "settings": {"seconds": seconds, "connections": connections,
                                            "postgresql": "defaults"},
                               "curve": {}}
    dsn, results["load"] = prepare(cluster, data_dir, main, compare_load=True, workers=workers)
    results["reads"] = serve_shape(dsn, data_dir, main, WITHIN, seconds=seconds,
                                   warmup=warmup, connections=connections, only=only)
    with servers.serving(servers.peers(dsn, data_dir)["geocatalog"], PORT) as ours:
        results["discovery"] = {name: measure(ours, name, requests(
            name, collections, items), seconds, warmup, connections) for name in DISCOVERY}
    database.end_sessions(dsn)
    with servers.serving(servers.peers(dsn, data_dir)["geocatalog"], PORT) as ours, \
            servers.serving(servers.peers(dsn, data_dir)["stock"], PORT + 1) as stock:
        results["same_answers"] = {
            name: _same_answers({"geocatalog": ours.url, "stock": stock.url},
                                requests(name, collections, items))
            for name in (*CROSS, *WITHIN)}
    database.end_sessions(dsn)
    for count in sorted({*curve, collections}):
        shape = Shape(count, items)
        shape_dsn = dsn if shape == main else prepare(
            cluster, data_dir, shape, compare_load=False, workers=workers)[0]
        results["curve"][str(count)] = serve_shape(
            shape_dsn, data_dir, shape, CROSS, seconds=seconds, warmup=warmup,
            connections=connections, only=only)
    return results


# a scenario in which not one request finished (each still waiting at the end, under wrk's
# 30 s timeout) has no latency to show: its zeros would read as the fastest answer
NO_ANSWER = "none finished"


def p95(f: dict[str, Any], errors: str = " errors") -> str:
    """A scenario's p95 ms, its errors beside where any (`errors` after their number)."""
    if not f["requests"]:
        return NO_ANSWER
    return f"{f['p95_ms']:.1f}" + (f" ({f['errors']}{errors})" if f["errors"] else "")


def _figures(f: dict[str, Any]) -> str:
    if not f["requests"]:
        return NO_ANSWER
    return f"{f['ok_rps']:.1f} ({f['p50_ms']:.1f} / {f['p95_ms']:.1f}, {f['errors']})"


def table(results: dict[str, Any]) -> str:
    """The CF-scale tables: reads at the largest shape, the cost curve, the loads."""
    shape = results["shape"]
    largest = str(shape["collections"])
    curve = results["curve"]
    reads = {server: {**results["reads"].get(server, {}), **curve[largest].get(server, {})}
             for server in SERVERS if server in curve[largest]}
    lines = [f"CF scale: {shape['collections']} collections, {shape['items']} items (largest "
             f"collection {shape['largest_collection']}), PostgreSQL defaults, "
             f"{results['settings']['connections']} connections",
             "| scenario | " + " | ".join(f"{s} ok req/s (p50 / p95 ms, errors)" for s in reads)
             + " | x stock | x rustac |",
             "|" + "---|" * (3 + len(reads))]
    for name in (*CROSS, *WITHIN):
        cells = [_figures(f) if (f := reads[s].get(name)) else "-" for s in reads]
        ours = reads.get("geocatalog", {}).get(name)
        for peer in ("stock", "rustac"):
            theirs = reads.get(peer, {}).get(name)
            cells.append("-" if not (ours and theirs) else "no answer" if not theirs["ok_rps"]
                         else f"{ours['ok_rps'] / theirs['ok_rps']:.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    shown = [s for s in SERVERS if s in curve[largest]]
    lines += ["", "cost curve: p95 ms of the same searches over the same items in more "
              "collections (errors in brackets where any)",
              "| scenario | collections | " + " | ".join(shown) + " |",
              "|" + "---|" * (2 + len(shown))]
    for name in CROSS:
        for count, by_server in sorted(curve.items(), key=lambda kv: int(kv[0])):
            cells = ["-" if not (f := by_server.get(s, {}).get(name)) else p95(f)
                     for s in shown]
            lines.append(f"| {name} | {count} | " + " | ".join(cells) + " |")
    smallest = str(min(map(int, curve)))
    if "geocatalog" in curve[smallest]:
        ours_at = {count: curve[count]["geocatalog"] for count in (smallest, largest)}
        growth = ", ".join(
            "{} {:.2f}x".format(name, ours_at[largest][name]["p95_ms"]
                                / ours_at[smallest][name]["p95_ms"]) for name in CROSS)
        lines.append(f"geocatalog p95 at {largest} / at {smallest} collections: {growth}")
    if discovery := results.get("discovery"):
        plain = reads.get("geocatalog", {})
        lines += ["", "finding data (geocatalog; stock and rustac offer neither): ok req/s "
                  "(p50 / p95 ms, errors); p50 against the plain search it refines",
                  "| scenario | geocatalog | p50 / plain search's p50 |", "|---|---|---|"]
        refines = {"GET /aggregate bbox+datetime (count, variables, years)":
                   "GET /search bbox+datetime limit=100",
                   "GET /search q=forecast limit=100": "GET /search limit=100"}
        for name, f in discovery.items():
            base = plain.get(refines.get(name, ""))
            ratio = f"{f['p50_ms'] / base['p50_ms']:.1f}x" if base else "-"
            lines.append(f"| {name} | {f['ok_rps']:.1f} ({f['p50_ms']:.1f} / "
                         f"{f['p95_ms']:.1f}, {f['errors']}) | {ratio} |")
    load = results["load"]
    if "pypgstac_load" in load:
        ours, theirs = load["geocatalog_load"], load["pypgstac_load"]
        lines.append(f"load of {load['items']} items: geocatalog load --workers "
                     f"{ours['workers']} {ours['items_per_s']} items/s ({ours['seconds']} s), "
                     f"pypgstac load {theirs['items_per_s']} items/s ({theirs['seconds']} s) "
                     f"= {ours['items_per_s'] / theirs['items_per_s']:.2f}x; database "
                     f"{load['database_mb']} MB, of which the search index "
                     f"{load['search_index_mb']} MB")
    for name, verdict in results.get("same_answers", {}).items():
        for peer, v in verdict.items():
            lines.append(f"same items as {peer} ({name}): {v['compared'] - v['differ']} of "
                         f"{v['compared']} answered by both")
    return "\n".join(lines)


app = typer.Typer(add_completion=False)


@app.command()
def main(
    items: Annotated[int, typer.Option(help="items of every shape")] = ITEMS,
    collections: Annotated[int, typer.Option(help="collections of the CF set")] = 5_000,
    curve: Annotated[list[int] | None, typer.Option(
        help="the cost curve's smaller shapes (collections)")] = None,
    seconds: Annotated[float, typer.Option(help="measured seconds per scenario")] = 10,
    warmup: Annotated[float, typer.Option(help="warm-up seconds per scenario")] = 2,
    only: Annotated[list[str] | None, typer.Option(help="only these servers")] = None,
    data_dir: Annotated[Path, typer.Option(help="clusters and results")] = Path(".bench"),
) -> None:
    results = run(data_dir, items=items, collections=collections,
                  curve=tuple(curve or (10, 100, 1_000)), seconds=seconds, warmup=warmup,
                  only=only)
    report(results, table(results), data_dir / "cf-results.json")


def report(results: dict[str, Any], text: str, out: Path) -> None:
    """The raw figures written to `out`, the table printed."""
    out.write_text(json.dumps(results, indent=2))
    print()
    print(text)
    print(f"\nraw figures: {out}")


if __name__ == "__main__":
    app()
