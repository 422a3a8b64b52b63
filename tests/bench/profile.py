"""Where a server spends its CPU under the benchmark's load: py-spy, summarised.

    .venv/bin/python -m tests.bench.profile "items limit=100" [--server stock-tuned]

Uses the cluster `make bench` left in `.bench/` (run it once first).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from stac_ext.platform.database.cluster import Cluster
from tests.bench import scenarios, servers, wrk

app = typer.Typer(add_completion=False)


def _package(frame: str) -> str:
    """`name (package/module.py:12)` -> package (or the module of a top-level file)."""
    where = frame.rpartition("(")[2]
    return where.split("/")[0].split(":")[0] or "?"


def summarise(raw: Path, top: int) -> str:
    """Inclusive share of samples per frame, busy samples only (idle waits dropped); then
    the self share per package (where the CPU goes, library by library) and per frame
    (native code counts in the Python frame that called it: `orjson.dumps` in its caller)."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    own_frames: Counter[str] = Counter()
    busy = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if any(idle in frames[-1] for idle in ("Condition.wait", "Runner.run", "select")):
            continue
        busy += int(count)
        for frame in set(frames):
            inclusive[frame] += int(count)
        own[_package(frames[-1])] += int(count)
        own_frames[frames[-1]] += int(count)
    rows = [f"{100 * n / busy:5.1f}%  {frame}" for frame, n in inclusive.most_common(top)
            if any(word in frame for word in (
                "stac_ext", "process_api", "catalogs_ext", "pgstac", "fastapi", "json",
                "asyncpg", "psycopg", "hydrat", "procrastinate"))]
    packages = [f"{100 * n / busy:5.1f}%  {name}" for name, n in own.most_common(15)]
    functions = [f"{100 * n / busy:5.1f}%  {frame}" for frame, n in own_frames.most_common(25)]
    return (f"{busy} busy samples\n" + "\n".join(rows) + "\n\nself, by package:\n"
            + "\n".join(packages) + "\n\nself, by frame:\n" + "\n".join(functions))


@app.command()
def main(
    scenario: Annotated[str, typer.Argument(help="a scenario name, as `make bench` prints")],
    server: Annotated[str, typer.Option(help="a server `make bench` runs")] = "geocatalog",
    seconds: Annotated[int, typer.Option()] = 10,
    top: Annotated[int, typer.Option(help="frames listed")] = 80,
    rate: Annotated[int, typer.Option(help="samples per second")] = 100,
    connections: Annotated[int, typer.Option(help="wrk's connections")] = 8,
    data_dir: Annotated[Path, typer.Option()] = Path(".bench"),
    pg_port: Annotated[int, typer.Option()] = 5449,
    items: Annotated[int, typer.Option(help="the main set's items")] = 200_000,
) -> None:
    data_dir = data_dir.resolve()
    cluster = Cluster(datadir=data_dir / "pg", port=pg_port)
    cluster.start()
    peer = servers.peers(cluster.dsn, data_dir)[server]
    reqs = scenarios.requests(scenario, items, peer.geocatalog)
    # writes need a token (as `make bench` sends); a fresh tag: new item ids every run
    token = servers.writer_token(*servers.local_issuer(cluster.dsn, data_dir))
    tag = f"profile{time.time_ns()}"
    with servers.serving(peer, 8097) as running, tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "profile.txt"
        wrk.run(running.url, reqs, seconds=2, connections=connections, token=token,
                tag=f"{tag}w")
        spy = subprocess.Popen(
            [str(Path(sys.executable).with_name("py-spy")), "record", "--nonblocking",
             "-p", str(running.process.pid), "-d", str(seconds), "-r", str(rate), "-f", "raw",
             "-o", str(raw)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        figures = wrk.run(running.url, reqs, seconds=seconds + 1, connections=connections,
                          token=token, tag=tag)
        spy.wait()
        print(f"{server} / {scenario}: {figures.rps} req/s, p50 {figures.p50_ms} ms, "
              f"{figures.errors} errors")
        print(summarise(raw, top))


if __name__ == "__main__":
    app()
