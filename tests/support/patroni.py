"""A Patroni cluster for tests: three members and one etcd on loopback in a temp folder the
`postgres` user can reach, with a short TTL, migrated by `geocatalog migrate` over its
multi-host URL, every process stopped by its PID afterwards; the service's parts
(`geocatalog serve`, `geocatalog worker`) on it, as an operator starts them."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg

from stac_ext.platform.database import roles
from stac_ext.platform.database.patroni_cluster import PatroniCluster
from stac_ext.platform.database.patroni_members import Timing
from tests.support.cli import run_cli, start_cli
from tests.support.http import free_port

#: A short TTL keeps the drills short: a dead primary's key expires within 10 s.
TIMING = Timing(ttl=10, loop_wait=2, retry_timeout=4)


@contextmanager
def patroni_cluster(prefix: str, timing: Timing = TIMING) -> Iterator[PatroniCluster]:
    """A started cluster, migrated (`geocatalog migrate` over the URL of every member)."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    cluster = PatroniCluster(root / "ha", timing)
    try:
        cluster.start()
        out = run_cli("migrate", env=service_env(cluster))
        assert out.returncode == 0, out.stderr[-2000:]
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def service_env(cluster: PatroniCluster) -> dict[str, str]:
    """Each part's URL lists every member, as its own role (the service adds each part's
    `target_session_attrs`); the data API reads from a replica where one answers."""
    return {"DATABASE_URL": cluster.url(), "API_DATABASE_URL": cluster.url(roles.API),
            "WORKER_DATABASE_URL": cluster.url(roles.WORKER),
            "JOB_DATABASE_URL": cluster.url(roles.JOB),
            "DATABASE_READER_URL": cluster.url(roles.API)}


def primary(cluster: PatroniCluster) -> psycopg.Connection:
    """A connection to the primary, as the owner."""
    return psycopg.connect(cluster.url(target="read-write"), autocommit=True,
                           connect_timeout=5)


@dataclass
class Service:
    """`geocatalog serve` (its manager and its workers) and `geocatalog worker`."""

    base: str
    serve: subprocess.Popen[str]
    worker: subprocess.Popen[str]

    def pids(self) -> set[int]:
        """Every process of the service: one restarted would show a new pid here."""
        children = Path(f"/proc/{self.serve.pid}/task/{self.serve.pid}/children")
        found = {self.serve.pid, self.worker.pid}
        found |= {int(pid) for pid in children.read_text().split()} if children.exists() \
            else set()
        return {pid for pid in found if Path(f"/proc/{pid}").exists()}


@contextmanager
def serving(cluster: PatroniCluster, data_dir: Path, issuer_url: str,
            **env: str) -> Iterator[Service]:
    """The service on the cluster: two API workers (the data API's reads on a replica),
    one job worker; stopped (SIGTERM, then SIGKILL) by their pids afterwards."""
    port = free_port()
    environ = {**os.environ, **service_env(cluster), "OIDC_ISSUER": issuer_url,
               "GEOCATALOG_DATA_DIR": str(data_dir), "LOAD_DEMO_DATA": "false",
               "MIGRATE_ON_START": "false", "IN_PROCESS_WORKER": "false",
               "JOB_USER_QUEUED": "100000", "JOB_USER_RUNNING": "8", **env}
    serve = start_cli("serve", "--port", str(port), "--workers", "2", env=environ,
                      stdout=subprocess.DEVNULL, stderr=(data_dir / "serve.log").open("w"))
    worker = start_cli("worker", "--concurrency", "4", env=environ,
                       stdout=subprocess.DEVNULL, stderr=(data_dir / "worker.log").open("w"))
    service = Service(f"http://127.0.0.1:{port}", serve, worker)
    try:
        deadline = time.monotonic() + 120
        while True:
            for process in (serve, worker):
                assert process.poll() is None, (data_dir / "serve.log").read_text()[-3000:]
            try:
                if httpx.get(f"{service.base}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the service did not start"
            time.sleep(0.2)
        yield service
    finally:
        for process in (worker, serve):
            process.terminate()
        for process in (worker, serve):
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
