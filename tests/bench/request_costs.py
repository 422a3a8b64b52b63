"""Where a single item's request spends the API's CPU, measured in place: the whole app on
the benchmark's database (the main set, 300 rotating ids, metrics kept as `geocatalog
serve` keeps them), then the same app without each middleware, without any, the endpoint
alone and the database's round trip alone. Raw ASGI calls, one at a time, no HTTP server:
CPU time of this process per call, the median of rounds that take the variants in turn
(in a shuffled order).

    .venv/bin/python -m tests.bench.request_costs [--calls 2000] [--rounds 7]

Uses the cluster `make bench` left in `.bench/` (run it once first). `tests.bench.layers`
measures each middleware alone around an endpoint that answers at once; this one measures
what each costs where it stands, and what the rest of the request costs.
"""

from __future__ import annotations

import os
import tempfile

# The metrics' storage is chosen when prometheus_client is imported: files, as served.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="geocatalog-metrics-"))

import random
import statistics
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Any

import typer
from fastapi import FastAPI
from starlette.requests import Request
from starlette.types import Message

from stac_ext.app import create_app
from stac_ext.data_api import queries
from stac_ext.data_api.read_client import CoreClient
from stac_ext.platform.database.cluster import Cluster
from stac_ext.settings import Settings
from tests.bench import scenarios

Call = Callable[[str], Awaitable[None]]


async def _received() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _sent(message: Message) -> None:
    if message["type"] == "http.response.start" and message["status"] != 200:
        raise RuntimeError(f"answered {message['status']}")


def _scope(app: FastAPI, path: str, state: dict[str, Any]) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5555),
            "server": ("127.0.0.1", 8080), "state": dict(state), "app": app,
            "headers": [(b"host", b"127.0.0.1:8080"), (b"accept", b"*/*"),
                        (b"user-agent", b"wrk")]}


def _app(settings: Settings, without: str | None) -> FastAPI:
    """The app; without one middleware (its class name), or any ("all")."""
    app = create_app(settings)
    app.user_middleware[:] = [] if without == "all" else [
        m for m in app.user_middleware if getattr(m.cls, "__name__", "") != without]
    return app


async def _calls(settings: Settings, stack: AsyncExitStack) -> dict[str, Call]:
    """Each variant's call of one path."""
    full = _app(settings, None)
    names = [getattr(m.cls, "__name__", str(m.cls)) for m in full.user_middleware]
    variants: dict[str, Call] = {}
    for name in ["whole request", *names, "all"]:
        app = full if name == "whole request" else _app(settings, name)
        started: Any = await stack.enter_async_context(app.router.lifespan_context(app))
        state = dict(started or {})

        async def whole(path: str, app: FastAPI = app, state: dict[str, Any] = state) -> None:
            await app(_scope(app, path, state), _received, _sent)

        variants[name if name in ("whole request", "all") else f"without {name}"] = whole
    bare = full.router
    client = CoreClient()

    async def routing(path: str) -> None:  # FastAPI's own layers, the router, the endpoint
        async with AsyncExitStack() as astack:
            scope = _scope(full, path, {})
            scope["fastapi_middleware_astack"] = astack
            await bare(scope, _received, _sent)

    async def endpoint(path: str) -> None:  # our client's get_item: query, render, encode
        parts = path.split("/")
        await client.get_item(parts[5], parts[3], Request(_scope(full, path, {}), _received))

    async def database(path: str) -> None:  # a pooled connection and the item's query
        parts = path.split("/")
        async with full.state.get_connection(Request(_scope(full, path, {})), "r") as conn:
            await conn.fetchval(queries.STORED_ITEM, parts[3], parts[5], "null")

    variants.update({"routers and endpoint": routing, "endpoint alone": endpoint,
                     "database alone": database})
    return variants


async def costs(dsn: str, data_dir: Path, calls: int, rounds: int) -> dict[str, float]:
    """Median microseconds of CPU per call of each variant."""
    settings = Settings(database_url=dsn, geocatalog_data_dir=data_dir, load_demo_data=False,
                        in_process_worker=False, db_min_conn_size=1)
    rng = random.Random(3)
    paths = ["/data" + r.path for r in scenarios.requests("single item", 200_000, True)]
    async with AsyncExitStack() as stack:
        variants = await _calls(settings, stack)
        for call in variants.values():
            for path in paths:
                await call(path)
        found: dict[str, list[float]] = {name: [] for name in variants}
        order = list(variants.items())
        for _ in range(rounds):
            rng.shuffle(order)  # no variant always first or last
            for name, call in order:
                started = time.process_time()
                for n in range(calls):
                    await call(paths[n % len(paths)])
                found[name].append((time.process_time() - started) / calls * 1e6)
    return {name: statistics.median(values) for name, values in found.items()}


def main(calls: Annotated[int, typer.Option()] = 2000,
         rounds: Annotated[int, typer.Option()] = 7,
         data_dir: Annotated[Path, typer.Option()] = Path(".bench"),
         pg_port: Annotated[int, typer.Option()] = 5449) -> None:
    import uvloop  # uvicorn's loop, as served

    data_dir = data_dir.resolve()
    cluster = Cluster(datadir=data_dir / "pg", port=pg_port)
    cluster.start()
    found = uvloop.run(costs(cluster.dsn, data_dir, calls, rounds))
    whole = found["whole request"]
    for name, cost in found.items():
        more = "" if not name.startswith("without ") else f"   its cost {whole - cost:6.1f} us"
        print(f"{name:40} {cost:7.1f} us{more}")


if __name__ == "__main__":
    typer.run(main)
