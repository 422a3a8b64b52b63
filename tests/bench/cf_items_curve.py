"""The CF shape grown in items, not in collections: the same 5,000 collections holding 1 and
then 10 million items, the CF scenarios' p95 at each, the load's time and the disk.

    .venv/bin/python -m tests.bench.cf_items_curve [--items 1000000 --items 10000000]
    make bench BENCH_ARGS="--cf-items-curve 10000000"   (the same, after the rest)

Too long for a plain `make bench` (10 million items take about half an hour to write and
load on two cores), so it runs on request; its table is kept in docs/performance.md. Each
size's database is made once in the CF cluster (`cf_scale.prepare`) and kept; the million's
is the one `make bench` reads, loaded with pypgstac's beside it as there. The item files of
a size above the million are removed once loaded (8 GB at 10 million; the seed makes them
again).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated, Any

import typer

from stac_ext.platform.database.cluster import Cluster
from tests.bench import cf_scale, database, servers


def run(data_dir: Path, sizes: tuple[int, ...], *, collections: int = 5_000,
        seconds: float = 10, warmup: float = 2, connections: int = 8, pg_port: int = 5451,
        workers: int = 2, only: list[str] | None = None) -> dict[str, Any]:
    """Per size (items): its load's figures, the CF scenarios per server, and the finding
    scenarios on geocatalog."""
    data_dir = data_dir.resolve() / "cf"
    data_dir.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(datadir=data_dir / "pg", port=pg_port, settings={})  # PG's defaults
    cluster.start()
    results: dict[str, Any] = {"collections": collections, "connections": connections,
                               "seconds": seconds, "sizes": {}}
    for items in sorted(sizes):
        shape = cf_scale.Shape(collections, items)
        print(f"{shape.name}: load ...", flush=True)
        # a size `make bench` reads too is loaded as it loads it (pypgstac beside), and its
        # files kept; a larger one's files go
        dsn, load = cf_scale.prepare(cluster, data_dir, shape,
                                     compare_load=items <= cf_scale.ITEMS, workers=workers)
        if items > cf_scale.ITEMS:
            shutil.rmtree(data_dir / "files" / shape.name, ignore_errors=True)
        reads = cf_scale.serve_shape(dsn, data_dir, shape, (*cf_scale.CROSS, *cf_scale.WITHIN),
                                     seconds=seconds, warmup=warmup, connections=connections,
                                     only=only)
        with servers.serving(servers.peers(dsn, data_dir)["geocatalog"], cf_scale.PORT) as ours:
            reads.setdefault("geocatalog", {}).update({
                name: cf_scale.measure(ours, name, cf_scale.requests(name, collections, items),
                                       seconds, warmup, connections)
                for name in cf_scale.DISCOVERY})
        database.end_sessions(dsn)
        results["sizes"][str(items)] = {"load": load, "reads": reads}
    return results


def table(results: dict[str, Any]) -> str:
    """p95 ms per scenario and size (errors beside), geocatalog's growth from the smallest
    size to the largest, and each size's load and disk."""
    sizes = sorted(results["sizes"], key=int)
    shown = [s for s in cf_scale.SERVERS if any(s in results["sizes"][n]["reads"]
                                                 for n in sizes)]
    lines = [f"CF shape in items: {results['collections']} collections, PostgreSQL defaults, "
             f"{results['connections']} connections, {results['seconds']} s per scenario; "
             "p95 ms (errors where any)",
             "| scenario | " + " | ".join(f"{server} at {int(n):,}" for server in shown
                                         for n in sizes) + " | geocatalog growth |",
             "|" + "---|" * (2 + len(shown) * len(sizes))]
    for name in (*cf_scale.CROSS, *cf_scale.WITHIN, *cf_scale.DISCOVERY):
        cells, ours = [], []
        for server in shown:
            for n in sizes:
                f = results["sizes"][n]["reads"].get(server, {}).get(name)
                cells.append("-" if not f else cf_scale.p95(f, errors=""))
                if server == "geocatalog" and f and f["requests"]:
                    ours.append(f["p95_ms"])
        growth = f"{ours[-1] / ours[0]:.2f}x" if len(ours) > 1 and ours[0] else "-"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {growth} |")
    lines += ["", "| items | geocatalog load | items/s | pypgstac load | database | "
              "of which the search index |", "|---|---|---|---|---|---|"]
    for n in sizes:
        load = results["sizes"][n]["load"]
        ours, theirs = load["geocatalog_load"], load.get("pypgstac_load")
        against = "-" if not theirs else \
            f"{theirs['seconds']} s ({ours['items_per_s'] / theirs['items_per_s']:.2f}x)"
        lines.append(f"| {int(n):,} | {ours['seconds']} s | {ours['items_per_s']} | {against} "
                     f"| {load['database_mb']:,} MB | {load['search_index_mb']:,} MB |")
    return "\n".join(lines)


app = typer.Typer(add_completion=False)


@app.command()
def main(
    items: Annotated[list[int] | None, typer.Option(help="the sizes, in items")] = None,
    collections: Annotated[int, typer.Option(help="collections of the CF set")] = 5_000,
    seconds: Annotated[float, typer.Option(help="measured seconds per scenario")] = 10,
    only: Annotated[list[str] | None, typer.Option(help="only these servers")] = None,
    data_dir: Annotated[Path, typer.Option(help="clusters and results")] = Path(".bench"),
    pg_port: Annotated[int, typer.Option(help="the CF cluster's port")] = 5451,
) -> None:
    results = run(data_dir, tuple(items or (cf_scale.ITEMS, 10_000_000)), collections=collections,
                  seconds=seconds, only=only, pg_port=pg_port)
    cf_scale.report(results, table(results), data_dir / "cf-items-results.json")


if __name__ == "__main__":
    app()
