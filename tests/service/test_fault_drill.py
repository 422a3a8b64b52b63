"""Fault drills on real processes, loopback only, bounded: the database stops and starts
under a read+write load; the service is SIGKILLed during writes and restarted. (A worker
killed mid-job: tests/processes/test_job_engine.py.) Each drill has a cluster of its own, so the
rest of the suite never sees its outage.

Latencies are printed, not asserted (no time limits in tests): with DB_TIMEOUT=1 the
outage's answers come within about a second.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import pytest

from stac_ext.platform.database.cluster import Cluster
from tests.support.cli import start_cli
from tests.support.cluster import migrated_cluster
from tests.support.http import free_port, wait_until_ok
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT
from tests.support.product import running
from tests.support.roles import role_env
from tests.support.stac import make_collection, make_item, unique
from tests.support.uvicorn_process import uvicorn_process

pytestmark = pytest.mark.slow

COLLECTION = "test_conv-drill"


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    with migrated_cluster("geocatalog-drill-") as cluster:
        yield cluster


def serve(cluster: Cluster, issuer, data_dir: Path, port: int):  # type: ignore[no-untyped-def]
    env = {**os.environ, "DATABASE_URL": cluster.dsn, "OIDC_ISSUER": issuer.url,
           "GEOCATALOG_DATA_DIR": str(data_dir), "LOAD_DEMO_DATA": "false",
           "IN_PROCESS_WORKER": "true", "DB_TIMEOUT": "1"}
    return uvicorn_process("stac_ext.app:create_app", port, env, "/healthz")


@dataclass
class Load:
    """A bounded closed-loop load of reads and writes on seven endpoints, from threads."""

    base: str
    tokens: dict[str, str]
    answers: list[tuple[float, str, int, float]] = field(default_factory=list)
    items: list[str] = field(default_factory=list)  # acknowledged (201) writes
    catalogs: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def requests(self, n: int) -> tuple[str, str, dict | None, str]:
        kind = n % 7
        if kind == 0:
            return "GET", "/data/collections", None, "data"
        if kind == 1:
            return "GET", f"/data/collections/{COLLECTION}/items?limit=5", None, "data"
        if kind == 2:
            return "GET", "/data/search?limit=5", None, "data"
        if kind == 3:
            return "POST", f"/data/collections/{COLLECTION}/items", \
                make_item(unique("drill-")), "data"
        if kind == 4:
            links = ([{"rel": "item", "href": f"collections/{COLLECTION}/items/"
                       f"{self.items[-1]}"}] if self.items else [])
            return "POST", "/data/catalogs", {"id": unique("drill-"), "type": "Catalog",
                                              "description": "drill", "links": links}, "data"
        if kind == 5 and self.catalogs:
            return "GET", f"/data/catalogs/{self.catalogs[-1]}", None, "data"
        return "GET", "/processes/jobs?limit=5", None, "processes"

    def run(self, worker: int) -> None:
        with httpx.Client(base_url=self.base, timeout=30) as client:
            n = worker
            while not self.stop.is_set():
                method, path, body, api = self.requests(n)
                n += 6 * 7 + 1  # (43 % 7 == 1): every worker walks every kind of request
                started = time.monotonic()
                try:
                    r = client.request(method, path, json=body, headers={
                        "Authorization": f"Bearer {self.tokens[api]}"})
                    status = r.status_code
                except httpx.TransportError:
                    status = 0  # no answer at all: counted, and refused below
                self.answers.append((started, path, status, time.monotonic() - started))
                if status == 201 and body is not None:
                    (self.items if path.endswith("/items") else self.catalogs).append(
                        body["id"])

    def start(self, workers: int = 6) -> list[threading.Thread]:
        threads = [threading.Thread(target=self.run, args=(w,)) for w in range(workers)]
        for thread in threads:
            thread.start()
        return threads


def tokens(issuer) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {"data": issuer.token("driller", ttl=3600),
            "processes": issuer.token("driller", client=PROCESS_CLIENT, ttl=3600)}


def seed(base: str, issuer) -> None:  # type: ignore[no-untyped-def]
    admin = {"Authorization": f"Bearer {issuer.token('root', rights=[ADMIN_RIGHT])}"}
    r = httpx.post(f"{base}/data/collections", json=make_collection(COLLECTION), headers=admin)
    assert r.status_code == 201, r.text


def stored(cluster: Cluster) -> tuple[set[str], set[str], int]:
    """(item ids, catalog ids, catalog links to items that do not exist)."""
    with psycopg.connect(cluster.dsn) as conn:
        items = {r[0] for r in conn.execute("SELECT id FROM pgstac.items")}
        catalogs = {r[0] for r in conn.execute("SELECT id FROM catalogs.catalogs")}
        dangling = conn.execute(
            "SELECT count(*) FROM catalogs.links l WHERE l.item_id IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM pgstac.items i WHERE i.collection = l.collection_id "
            "AND i.id = l.item_id)").fetchone()
    return items, catalogs, dangling[0] if dangling else -1


def test_database_outage_under_load(own_cluster: Cluster, issuer, tmp_path: Path) -> None:
    port = free_port()
    with serve(own_cluster, issuer, tmp_path, port):
        base = f"http://127.0.0.1:{port}"
        seed(base, issuer)
        load = Load(base, tokens(issuer))
        threads = load.start()
        time.sleep(3)
        down = time.monotonic()
        own_cluster.stop()
        time.sleep(5)
        own_cluster.start()
        up = time.monotonic()
        time.sleep(6)
        load.stop.set()
        for thread in threads:
            thread.join()
        after = httpx.get(f"{base}/healthz")
        job = _echo_after_recovery(base, load.tokens["processes"])
    statuses = {status for _, _, status, _ in load.answers}
    assert statuses <= {200, 201, 503}, sorted(statuses)
    during = [a for a in load.answers if down <= a[0] < up]
    assert 503 in {status for _, _, status, _ in during}  # the drill did hit the outage
    latest = [a for a in load.answers if a[0] > up + 3]
    assert latest and {status for _, _, status, _ in latest} <= {200, 201}  # recovered
    assert after.status_code == 200
    assert job == "successful"  # the in-process job worker is back too
    items, catalogs, dangling = stored(own_cluster)
    assert set(load.items) <= items and set(load.catalogs) <= catalogs  # nothing lost
    assert dangling == 0
    waits = sorted(seconds for _, _, _, seconds in during)
    print(f"\noutage: {len(during)} answers, p50 {statistics.median(waits):.3f} s, "
          f"p99 {waits[int(len(waits) * 0.99) - 1]:.3f} s, max {waits[-1]:.3f} s; "
          f"{len(load.answers)} answers in all")


def _echo_after_recovery(base: str, token: str) -> str:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as c:
        r = c.post("/processes/processes/echo/execution", json={"processInputs": {}})
        assert r.status_code == 201, r.text
        deadline = time.monotonic() + 60
        while (status := c.get(r.headers["Location"]).json()["status"]) not in (
                "successful", "failed") and time.monotonic() < deadline:
            time.sleep(0.2)
    return status


def test_service_killed_during_writes(own_cluster: Cluster, issuer, tmp_path: Path) -> None:
    port = free_port()
    load = Load(f"http://127.0.0.1:{port}", tokens(issuer))
    with serve(own_cluster, issuer, tmp_path, port) as server:
        seed(load.base, issuer)
        threads = load.start()
        time.sleep(3)
        server.send_signal(signal.SIGKILL)
        server.wait()
        load.stop.set()
        for thread in threads:
            thread.join()
    assert load.items and load.catalogs  # writes were acknowledged before the kill
    with serve(own_cluster, issuer, tmp_path, port), httpx.Client(base_url=load.base) as client:
        for item_id in load.items:
            r = client.get(f"/data/collections/{COLLECTION}/items/{item_id}")
            assert r.status_code == 200 and r.json()["properties"]["owner"] == "driller"
        for catalog_id in load.catalogs:
            assert client.get(f"/data/catalogs/{catalog_id}").status_code == 200
    assert stored(own_cluster)[2] == 0  # no catalog links to a missing item


@pytest.mark.parametrize(("api_workers", "workers"), [(2, 0), (1, 2)],
                         ids=["serve-with-its-workers", "serve-and-geocatalog-workers"])
def test_database_outage_while_jobs_run(own_cluster: Cluster, settings, issuer,
                                        tmp_path: Path, api_workers: int,
                                        workers: int) -> None:
    """Jobs running when the database goes away for 12 s go on, and end as they would
    have (one ending while it is away, its record once it is back), with two API
    processes each running jobs, and with separate workers: a worker stopped at its first
    failed heartbeat, and another process then failed its job as "stopped (crash or
    kill)". The log says each thing in a line."""
    token = issuer.token("driller", client=PROCESS_CLIENT, ttl=3600)
    with running(settings, tmp_path / "service", api_workers=api_workers, workers=workers,
                 database_url=own_cluster.dsn, MIGRATE_ON_START="true", DB_TIMEOUT="1",
                 JOB_USER_RUNNING="4") as product, product.client(token) as c:
        jobs = [c.post("/processes/processes/sleep/execution",
                       json={"processInputs": {"seconds": seconds}}).headers["Location"]
                for seconds in (25, 5)]
        deadline = time.monotonic() + 60
        while {c.get(url).json()["status"] for url in jobs} != {"running"} and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        own_cluster.stop()
        time.sleep(12)
        own_cluster.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                ended = [c.get(url).json() for url in jobs]
                if all(job["status"] in ("successful", "failed") for job in ended):
                    break
            except (httpx.TransportError, ValueError):
                pass
            time.sleep(0.5)
        text = product.log_text()
    print(text)
    assert [(job["status"], job["message"]) for job in ended] == [("successful", "finished")] * 2
    assert "Traceback" not in text


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_a_killed_manager_takes_its_workers_along(settings, tmp_path: Path) -> None:
    """`kill -9` of `geocatalog serve` (uvicorn's worker manager) left its worker serving
    with nobody to restart it, holding the port: the worker now ends with its manager, and
    the service's supervisor (systemd's `Restart=always`, docker/systemd/) starts it all
    again on the same port."""
    port = free_port()
    env = {"DATABASE_URL": settings.database_url, **role_env(settings.database_url),
           "GEOCATALOG_DATA_DIR": str(tmp_path), "OIDC_ISSUER": settings.oidc_issuer,
           "LOAD_DEMO_DATA": "false", "IN_PROCESS_WORKER": "true",
           "JOB_QUEUE": f"manager-{uuid.uuid4().hex[:8]}"}
    base = f"http://127.0.0.1:{port}"
    manager = start_cli("serve", "--port", str(port), "--workers", "2", env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until_ok(f"{base}/healthz").status_code == 200
        workers = [int(pid) for pid in
                   Path(f"/proc/{manager.pid}/task/{manager.pid}/children").read_text().split()
                   if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(workers) == 2
        manager.send_signal(signal.SIGKILL)
        manager.wait()
        deadline = time.monotonic() + 60  # bounded; not a timing assertion
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)]
    finally:
        manager.kill()
        manager.wait()
    # what a supervisor does: start it again, on the same port
    again = start_cli("serve", "--port", str(port), env=env, stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL)
    try:
        assert wait_until_ok(f"{base}/healthz").status_code == 200
    finally:
        again.terminate()
        again.wait(60)
