"""The metrics as Prometheus scrapes them: `GET /metrics` beside the APIs (off their
prefixes), or a port of their own (`METRICS_PORT`), for the API and for a worker.

With several processes writing metrics (`geocatalog serve`: uvicorn's workers), they go
through prometheus-client's multi-process mode: each process writes its values into files
of `PROMETHEUS_MULTIPROC_DIR` and a scrape adds them up (`registry`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
    start_http_server,
)

from stac_ext.platform.telemetry.readings import Readings

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"


def registry() -> CollectorRegistry:
    """Every process's metrics when several write them (multi-process mode), else this
    process's."""
    if not os.environ.get(MULTIPROC_DIR):
        return REGISTRY
    collected = CollectorRegistry()
    multiprocess.MultiProcessCollector(collected)
    return collected


def metrics_router(readings: Readings) -> APIRouter:
    router = APIRouter()

    @router.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        """The metrics in Prometheus's text format (this process's readings as of now)."""
        readings.sample()
        return Response(generate_latest(registry()), media_type=CONTENT_TYPE_LATEST)

    return router


def serve_port(port: int, host: str) -> None:
    """The metrics on a port of their own, from a thread of this process."""
    start_http_server(port, addr=host, registry=registry())


@contextmanager
def multiprocess_files() -> Iterator[None]:
    """Multi-process mode for the processes started within (they inherit the variable), in
    a folder of their own removed afterwards; an operator's own `PROMETHEUS_MULTIPROC_DIR`
    is used as it is."""
    if os.environ.get(MULTIPROC_DIR):
        yield
        return
    folder = tempfile.mkdtemp(prefix="geocatalog-metrics-")
    os.environ[MULTIPROC_DIR] = folder
    try:
        yield
    finally:
        os.environ.pop(MULTIPROC_DIR, None)
        shutil.rmtree(folder, ignore_errors=True)
