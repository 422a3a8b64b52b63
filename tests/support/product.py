"""The product as an operator starts it: `geocatalog serve` (uvicorn, uvloop, its worker
processes) with its in-process job worker, or with separate `geocatalog worker` processes,
on a database of the tests; each process's output in a log file the test may read."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from stac_ext.settings import Settings
from tests.support.cli import COMMAND
from tests.support.http import free_port
from tests.support.roles import role_env
from tests.support.uvicorn_process import server_process


@dataclass
class Product:
    """A started service: where it answers, its data dir, its processes and their logs."""

    base: str
    data_dir: Path
    env: dict[str, str]
    serve: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base, headers=headers, timeout=60)

    def log_text(self) -> str:
        return "\n".join(log.read_text(errors="replace") for log in self.logs if log.exists())

    def start_worker(self, *options: str) -> subprocess.Popen[bytes]:
        """One more `geocatalog worker` on the service's queue."""
        log = self.data_dir / f"worker-{len(self.workers)}.log"
        with log.open("ab") as out:
            process = subprocess.Popen([*COMMAND, "worker", "--concurrency", "2", *options],
                                       env=self.env, stdout=out, stderr=out)
        self.workers.append(process)
        self.logs.append(log)
        return process


def product_env(settings: Settings, data_dir: Path, database_url: str | None = None,
                **env: str) -> dict[str, str]:
    """The environment of the service's processes: the tests' database (each part as its
    own role), issuer and processes, a job queue of its own, `env` over it."""
    url = database_url or settings.database_url or ""
    return {**os.environ, "DATABASE_URL": url, **role_env(url),
            "OIDC_ISSUER": settings.oidc_issuer or "", "LOAD_DEMO_DATA": "false",
            "MIGRATE_ON_START": "false", "GEOCATALOG_DATA_DIR": str(data_dir),
            "JOB_QUEUE": f"product-{uuid.uuid4().hex[:8]}", "JOB_HEARTBEAT_SECONDS": "0.5",
            "JOB_STALLED_SECONDS": "3",
            "PROCESS_DEFINITIONS": ",".join(map(str, settings.process_definitions)), **env}


@contextmanager
def running(settings: Settings, data_dir: Path, *, workers: int = 0, api_workers: int = 1,
            database_url: str | None = None, **env: str) -> Iterator[Product]:
    """`geocatalog serve --workers api_workers` and `workers` separate `geocatalog worker`
    processes (none: the in-process worker runs the jobs, as `make run`'s does)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    environ = product_env(settings, data_dir, database_url, GEOCATALOG_PORT=str(port),
                          IN_PROCESS_WORKER="false" if workers else "true", **env)
    log = data_dir / "serve.log"
    with ExitStack() as stack:
        out = stack.enter_context(log.open("ab"))
        serve = stack.enter_context(server_process(
            [*COMMAND, "serve", "--workers", str(api_workers), "--port", str(port)], port,
            environ, "/healthz", timeout=180, stdout=out, stderr=out))
        made = Product(f"http://127.0.0.1:{port}", data_dir, environ, serve, logs=[log])
        try:
            for _ in range(workers):
                made.start_worker()
            yield made
        finally:
            for worker in made.workers:
                if worker.poll() is None:
                    worker.send_signal(signal.SIGTERM)
            for worker in made.workers:
                try:
                    worker.wait(30)
                except subprocess.TimeoutExpired:
                    worker.kill()
                    worker.wait()
