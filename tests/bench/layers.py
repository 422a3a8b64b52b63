"""What each middleware of the app costs a single-item GET: each alone around an endpoint that
answers at once (an item's worth of bytes), its CPU time per call less the endpoint's, the
median of 5 slices of 20,000 calls. No server, no database: the layers' own cost, which a
whole request's figures hide in their noise.

    .venv/bin/python -m tests.bench.layers
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from stac_ext.app import create_app
from stac_ext.settings import Settings

PATH = "/data/collections/bench-a/items/bench-a-000001"
BODY = b'{"type": "Feature"}' * 200


async def _endpoint(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/geo+json"),
                            (b"content-length", str(len(BODY)).encode())]})
    await send({"type": "http.response.body", "body": BODY})


async def _received() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _sent(message: dict[str, Any]) -> None:
    return None


async def _per_call(asgi: Any, app: Any, calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "GET", "scheme": "http", "path": PATH, "raw_path": PATH.encode(),
                 "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5555),
                 "server": ("127.0.0.1", 8080), "state": {}, "app": app,
                 "headers": [(b"host", b"127.0.0.1:8080"), (b"accept", b"*/*")]}
        await asgi(scope, _received, _sent)
    return (time.process_time() - started) / calls * 1e6


async def costs(calls: int = 20_000, slices: int = 5) -> dict[str, float]:
    """Microseconds of CPU each middleware adds to a call, outermost first."""
    with tempfile.TemporaryDirectory() as data_dir:
        app = create_app(Settings(database_url="postgresql://nobody@127.0.0.1:1/none",
                                  geocatalog_data_dir=Path(data_dir), load_demo_data=False,
                                  in_process_worker=False))
        alone = statistics.median([await _per_call(_endpoint, app, calls)
                                   for _ in range(slices)])
        found = {}
        for layer in app.user_middleware:
            wrapped = layer.cls(_endpoint, *layer.args, **layer.kwargs)
            found[getattr(layer.cls, "__name__", str(layer.cls))] = round(statistics.median(
                [await _per_call(wrapped, app, calls) for _ in range(slices)]) - alone, 1)
    return found


if __name__ == "__main__":
    figures = asyncio.run(costs())
    for name, cost in figures.items():
        print(f"{name:28} {cost:6.1f} us")
    print(f"{'all':28} {sum(figures.values()):6.1f} us")
