"""Two versions of geocatalog as real servers on `make bench`'s database, under the same
load in alternating slices (`paired`): what a change costs or saves a scenario, as req/s
and as the API's CPU per request. Each version is a commit exported with `git archive`
(`.` is this checkout as it stands) and served from its own directory, so each imports
its own `stac_ext`; both must run on the schema the database has.

    .venv/bin/python -m tests.bench.versions 6488e6d . [--scenario "single item"]...
        [--pairs 8] [--seconds 5]

Uses the cluster `make bench` left in `.bench/` (run it once first).
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated

import typer

from tests.bench import database, paired, scenarios, servers
from tests.support.uvicorn_process import uvicorn_process

app = typer.Typer(add_completion=False)
CHECKOUT = Path(__file__).resolve().parents[2]


def _export(revision: str, into: Path) -> Path:
    """The tree of `revision` (or this checkout, `.`) to serve from."""
    if revision == ".":
        return CHECKOUT
    archive = subprocess.run(["git", "-C", str(CHECKOUT), "archive", revision],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


@contextmanager
def _serving(revision: str, tree: Path, server: servers.Server,
             port: int) -> Iterator[servers.Running]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PG", "DATABASE_URL", "PROMETHEUS_MULTIPROC_DIR"))}
    # `python -m uvicorn` puts its working directory first on the path: this tree's code
    with tempfile.TemporaryDirectory(prefix="metrics-") as metrics, uvicorn_process(
            server.app, port, {**env, **server.env, "PYTHONPATH": str(tree),
                               "PROMETHEUS_MULTIPROC_DIR": metrics},
            "/data/collections", "--no-access-log", cwd=tree) as process:
        yield servers.Running(servers.Server(revision, server.app, server.prefix,
                                             geocatalog=True),
                              f"http://127.0.0.1:{port}{server.prefix}", process)


@app.command()
def main(
    a: Annotated[str, typer.Argument(help="a commit, or . for this checkout")],
    b: Annotated[str, typer.Argument(help="a commit, or . for this checkout")],
    scenario: Annotated[list[str] | None, typer.Option(help="a scenario (repeat for more); "
                                                       "single item by default")] = None,
    pairs: Annotated[int, typer.Option(help="ABBA pairs of slices")] = 8,
    seconds: Annotated[float, typer.Option(help="seconds per slice")] = 5,
    connections: Annotated[int, typer.Option(help="wrk connections")] = 8,
    data_dir: Annotated[Path, typer.Option(help="make bench's cluster")] = Path(".bench"),
    pg_port: Annotated[int, typer.Option(help="make bench's cluster's port")] = 5449,
    items: Annotated[int, typer.Option(help="the main set's items")] = 200_000,
) -> None:
    data_dir = data_dir.resolve()
    dsn = database.prepare(data_dir, pg_port, items)
    server = servers.peers(dsn, data_dir)["geocatalog"]
    with tempfile.TemporaryDirectory() as trees, ExitStack() as stack:
        first, second = (stack.enter_context(_serving(
            revision, _export(revision, Path(trees) / str(n)), server, 8097 + n))
            for n, revision in enumerate((a, b)))
        for name in scenario or ["single item"]:
            found = paired.compare(first, second, scenarios.requests(name, items, True),
                                   pairs=pairs, seconds=seconds, connections=connections)
            cpu = found["cpu_ms_per_request"]
            print(f"{name}: {a} / {b} req/s {found['ratio']:.3f} (pairs {found['ratios']}), "
                  f"API CPU {1000 * cpu['a']:.1f} vs {1000 * cpu['b']:.1f} us/request, "
                  f"errors {found['errors']}", flush=True)


if __name__ == "__main__":
    app()
