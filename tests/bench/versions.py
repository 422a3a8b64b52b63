"""Two versions of geocatalog as real servers on `make bench`'s database, under the same
load in alternating slices (`paired`): what a change costs or saves a scenario, as req/s
and as the API's CPU per request. A commit is served from its worktree
(`visibility.checkout`, as `visibility` serves its `--before`), `.` is this checkout; both
must run on the schema the database has (`visibility` migrates a copy for each instead).

    .venv/bin/python -m tests.bench.versions 6488e6d . [--scenario "single item"]...
        [--pairs 8] [--seconds 5]

Uses the cluster `make bench` left in `.bench/` (run it once first).
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from tests.bench import database, paired, scenarios, servers, visibility

app = typer.Typer(add_completion=False)


def _server(revision: str, dsn: str, data_dir: Path, side: str) -> servers.Server:
    """Revision's geocatalog, with metrics of its own (`side`: both may be commits)."""
    name = f"geocatalog-{side}"
    if revision == ".":
        return servers.geocatalog(name, dsn, data_dir)
    return visibility.old_server(visibility.checkout(revision, data_dir / "checkouts"), dsn,
                                 data_dir, name)


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
    with ExitStack() as stack:
        first, second = (stack.enter_context(servers.serving(
            _server(revision, dsn, data_dir, side), 8097 + n))
            for n, (revision, side) in enumerate(((a, "a"), (b, "b"))))
        token = servers.writer_token(*servers.local_issuer(dsn, data_dir))  # POST item's
        for name in scenario or ["single item"]:
            found = paired.compare(first, second, scenarios.requests(name, items, True),
                                   pairs=pairs, seconds=seconds, connections=connections,
                                   token=token)
            cpu = found["cpu_ms_per_request"]
            print(f"{name}: {a} / {b} req/s {found['ratio']:.3f} (pairs {found['ratios']}), "
                  f"API CPU {1000 * cpu['a']:.1f} vs {1000 * cpu['b']:.1f} us/request, "
                  f"errors {found['errors']}", flush=True)


if __name__ == "__main__":
    app()
