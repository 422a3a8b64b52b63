"""Delivery under failure, on real HTTP receivers on loopback: a burst of 1,000 items while
the receiver answers 500 for a minute, then recovers (every event arrives, each id at most
twice, in order per item); `kill -9` of the API's processes and a job worker mid-burst and
a database restart, then a restart (no acknowledged item's event is missing)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from stac_ext.platform.database.cluster import Cluster
from tests.support.cli import start_cli
from tests.support.cluster import migrated_cluster, migrated_database
from tests.support.http import free_port, http_client, wait_until_ok
from tests.support.issuer import ADMIN_RIGHT, TestIssuer
from tests.support.receiver import Receiver, receiving
from tests.support.stac import make_collection, make_item, unique

pytestmark = pytest.mark.slow

BURST = 1000


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return migrated_database(database_url, "subs_drill_")


@pytest.fixture(scope="module")
async def service(service_app, database: str) -> AsyncIterator[Any]:
    async with service_app(database=database, subscriptions_poll_seconds=0.1,
                           webhook_retry_seconds=0.5, webhook_retry_max_seconds=4) as started:
        yield started.app


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as found:
        yield found


async def test_a_burst_while_the_receiver_fails_for_a_minute_all_arrives(
        service, issuer: TestIssuer, receiver: Receiver) -> None:
    """1,000 items (a hundred of them updated as the burst goes on) while the receiver
    answers 500 for a minute: once it recovers, every event arrives, each id at most twice,
    each item's events in order."""
    async with http_client(service, issuer.token("root", rights=[ADMIN_RIGHT])) as admin, \
            http_client(service, issuer.token("alice")) as alice:
        collection = unique("test_conv-burst_")
        assert (await admin.post("/data/collections", json=make_collection(collection))
                ).status_code == 201
        r = await alice.post("/data/subscriptions", json={
            "search": {"collections": [collection]}, "webhook": f"{receiver.url}/burst"})
        assert r.status_code == 201
        receiver.status = 500
        failing_until = time.monotonic() + 60
        base = f"/data/collections/{collection}/items"
        slots = asyncio.Semaphore(16)

        async def write(n: int) -> None:
            async with slots:
                r = await alice.post(base, json=make_item(f"b{n:04d}", x=float(n % 170)))
                assert r.status_code == 201, r.text
                if n % 10 == 0:  # then changed: its events are two, in order
                    changed = make_item(f"b{n:04d}", x=float(n % 170))
                    changed.update(collection=collection)
                    changed["properties"]["title"] = "changed"
                    r = await alice.put(f"{base}/b{n:04d}", json=changed)
                    assert r.status_code == 200, r.text

        await asyncio.gather(*(write(n) for n in range(BURST)))
        expected = BURST + BURST // 10
        await asyncio.sleep(max(0.0, failing_until - time.monotonic()))
        failed = len(receiver.received)
        assert failed and not receiver.accepted()  # it was tried, and nothing got through
        receiver.status = 200
        accepted = await receiver.wait_for(expected, seconds=300)
    events = [r.event() for r in accepted]
    counts = Counter(e.get_id() for e in events)
    assert len(counts) == expected  # every event
    assert max(counts.values()) <= 2  # each at most twice
    by_item: dict[str, list[str]] = {}
    for event in events:
        kinds = by_item.setdefault(event.get_data()["id"], [])
        kind = event.get_type().rsplit(".", 1)[1]
        if kind not in kinds:
            kinds.append(kind)
    assert len(by_item) == BURST
    assert all(kinds == (["created", "updated"] if int(item[1:]) % 10 == 0 else ["created"])
               for item, kinds in by_item.items())
    print(f"{failed} attempts answered 500 during the minute; {len(accepted)} accepted after")


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    with migrated_cluster("geocatalog-subs-drill-") as cluster:
        yield cluster


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in
                Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def test_kill_9_of_every_process_mid_burst_loses_no_acknowledged_item(
        own_cluster: Cluster, issuer: TestIssuer, receiver: Receiver,
        tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"DATABASE_URL": own_cluster.dsn, "OIDC_ISSUER": issuer.url,
           "GEOCATALOG_DATA_DIR": str(tmp_path), "LOAD_DEMO_DATA": "false",
           "IN_PROCESS_WORKER": "false", "SUBSCRIPTIONS_POLL_SECONDS": "0.1",
           "WEBHOOK_RETRY_SECONDS": "0.2", "WEBHOOK_RETRY_MAX_SECONDS": "1", "DB_TIMEOUT": "2"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    admin = {"Authorization": f"Bearer {issuer.token('root', rights=[ADMIN_RIGHT])}"}
    alice = {"Authorization": f"Bearer {issuer.token('alice')}"}
    collection = unique("test_conv-killed_")
    acknowledged: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def burst(worker: int) -> None:
        with httpx.Client(base_url=base, headers=alice, timeout=10) as client:
            for n in range(BURST // 8):
                if stop.is_set():
                    return
                item_id = f"k{worker}-{n:04d}"
                try:
                    r = client.post(f"/data/collections/{collection}/items",
                                    json=make_item(item_id, x=float(n % 170)))
                except httpx.TransportError:
                    return  # the service is gone: this write was not acknowledged
                if r.status_code == 201:
                    with lock:
                        acknowledged.append(item_id)

    server = start_cli("serve", "--port", str(port), "--workers", "2", env=env, **quiet)
    jobs = start_cli("worker", env=env, **quiet)
    try:
        assert wait_until_ok(f"{base}/healthz").status_code == 200
        with httpx.Client(base_url=base) as client:
            assert client.post("/data/collections", json=make_collection(collection),
                               headers=admin).status_code == 201
            r = client.post("/data/subscriptions", headers=alice, json={
                "search": {"collections": [collection]}, "webhook": f"{receiver.url}/k"})
            assert r.status_code == 201, r.text
        with ThreadPoolExecutor(8) as pool:
            writers = [pool.submit(burst, w) for w in range(8)]
            deadline = time.monotonic() + 120
            while len(acknowledged) < BURST // 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            # kill -9: the API's processes, the job worker, all at once, mid-burst
            doomed = [*_children(server.pid), server.pid, jobs.pid]
            for pid in doomed:
                os.kill(pid, signal.SIGKILL)
            stop.set()
            for writer in writers:
                writer.result()
        server.wait()
        jobs.wait()
        told_before = len(receiver.accepted())
        own_cluster.stop()  # and the database restarts
        own_cluster.start()
        server = start_cli("serve", "--port", str(port), env=env, **quiet)
        jobs = start_cli("worker", env=env, **quiet)
        assert wait_until_ok(f"{base}/healthz").status_code == 200
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            heard = {r.event().get_data()["id"] for r in receiver.accepted()}
            if heard >= set(acknowledged):
                break
            time.sleep(0.2)
    finally:
        for process in (server, jobs):
            process.terminate()
        for process in (server, jobs):
            process.wait(60)
    assert len(acknowledged) >= BURST // 3
    missing = sorted(set(acknowledged) - heard)
    assert missing == [], f"{len(missing)} acknowledged items never announced"
    counts = Counter(r.event().get_id() for r in receiver.accepted())
    assert max(counts.values()) <= 2
    print(f"{len(acknowledged)} items acknowledged, {told_before} events told before the "
          f"kill, {len(receiver.accepted())} after the restart")
