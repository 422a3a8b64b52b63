"""Reads over a primary and a streaming replica vs one database: the benchmark's cluster,
a replica of it on this same machine, geocatalog under `uvicorn --workers 2` with and
without DATABASE_READER_URL; the read scenarios' req/s (a report, no target).

    .venv/bin/python -m tests.bench.replica [--seconds 15]
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from stac_ext.platform.database.cluster import Cluster
from tests.bench import database, scenarios, servers, wrk

app = typer.Typer(add_completion=False)
PORT = 8098


@app.command()
def main(
    seconds: Annotated[float, typer.Option(help="measured seconds per scenario")] = 15,
    items: Annotated[int, typer.Option(help="synthetic items")] = 21_000,
    data_dir: Annotated[Path, typer.Option(help="the benchmark's cluster")] = Path(".bench"),
    pg_port: Annotated[int, typer.Option(help="its port")] = 5449,
    replica_port: Annotated[int, typer.Option(help="the replica's port")] = 5450,
) -> None:
    data_dir = data_dir.resolve()
    dsn = database.prepare(data_dir, pg_port, items)
    primary = Cluster(datadir=data_dir / "pg", port=pg_port)
    replica_dir = data_dir / "replica"
    shutil.rmtree(replica_dir, ignore_errors=True)
    replica = primary.start_replica(replica_dir, replica_port)
    try:
        names = [s.name for s in scenarios.SCENARIOS if s.reads]
        for label, extra in (("one database", {}),
                             ("primary + replica", {"DATABASE_READER_URL": replica.dsn})):
            server = servers.geocatalog("geocatalog-2", dsn, data_dir, **extra)
            server = servers.Server(server.name, server.app, server.prefix, server.env, True,
                                    ("--workers", "2"))
            with servers.serving(server, PORT) as running:
                for name in names:
                    reqs = scenarios.requests(name, items, True)
                    wrk.run(running.url, reqs, seconds=3, tag="w")
                    figures = wrk.run(running.url, reqs, seconds=seconds, tag="m")
                    print(f"{label:18} {name:40} {figures.rps:8.1f} req/s "
                          f"p50 {figures.p50_ms:6.1f} ms", flush=True)
    finally:
        replica.stop()
        shutil.rmtree(replica_dir, ignore_errors=True)


if __name__ == "__main__":
    app()
