"""The catalog over a Patroni cluster (three PostgreSQL members on loopback, one etcd, a
short TTL), the service on it as an operator runs it (`geocatalog serve` with two API
workers, `geocatalog worker`), every part connecting through the URL of all members.

Drills, each during a burst of item POSTs (2,000 where the primary's machine is lost with
synchronous replication, 800 in the others), a tenth as many job submissions and a
twentieth as many catalog POSTs from 8 writers, reads running throughout:
- the primary's machine lost (`kill -9` of its Patroni and its PostgreSQL together), with
  synchronous replication: nothing acknowledged is lost;
- its postmaster alone killed: Patroni starts it again in place, no failover;
- the machine lost with asynchronous replication: what is lost is within what Patroni's
  `maximum_lag_on_failover` allows, as the docs say;
and a point-in-time restore from the cluster's pgBackRest backups.

After each: every 2xx-acknowledged item, job and catalog is on the new primary (counted
by id), no
answer was a 500 or came later than HANG, writes succeeded again within the TTL plus 15 s
of the fault, reads answered 200 or 503 throughout, a job running across the fault ended
once with its result, and no process of the service was restarted. The cluster is then
made whole again (the lost machine replaced by an empty one, which Patroni clones).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from stac_ext.platform.database.patroni_cluster import MAXIMUM_LAG_ON_FAILOVER, PatroniCluster
from stac_ext.platform.database.pgbackrest import lsn_number
from tests.support.burst import Burst
from tests.support.cli import run_cli
from tests.support.http import free_port
from tests.support.issuer import PROCESS_CLIENT
from tests.support.patroni import (
    TIMING,
    Service,
    patroni_cluster,
    primary,
    service_env,
    serving,
)
from tests.support.stac import make_collection, make_item
from tests.support.uvicorn_process import uvicorn_process

pytestmark = pytest.mark.slow

COLLECTION = "test_conv-failover"
#: Seeded items the readers read (on every replica before the drills start).
SEEDED = [f"seeded-{n}" for n in range(20)]
DB_TIMEOUT = 2.0
#: An answer later than this hung: a connection's wait (DB_TIMEOUT) for the pool and for
#: the queue's pool, and the request's own work on a loaded two-core machine.
HANG = 2 * DB_TIMEOUT + 3
#: Writes succeed again within this of the fault.
RECOVERED = TIMING.ttl + 15
#: The item POSTs of the drills other than the machine lost with synchronous replication
#: (the issue's 2,000): enough for writes before, during and after the fault.
SMALLER = 800
#: A job that runs across the fault (seconds).
LONG_JOB = TIMING.ttl + 8


@pytest.fixture(scope="module")
def cluster() -> Iterator[PatroniCluster]:
    with patroni_cluster("geocatalog-failover-") as started:
        yield started


@pytest.fixture(scope="module")
def service(cluster: PatroniCluster, issuer, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Service]:
    """The service on the cluster, its collection and the items the readers read loaded by
    `geocatalog load` over the members' URL."""
    data_dir = tmp_path_factory.mktemp("failover")
    seed = data_dir / "seed.ndjson"
    seed.write_text("\n".join(json.dumps(doc) for doc in [
        make_collection(COLLECTION),
        *(make_item(item_id, collection_id=COLLECTION) for item_id in SEEDED)]))
    out = run_cli("load", str(seed), "--owner", "root", env=service_env(cluster))
    assert out.returncode == 0, out.stderr[-2000:]
    with serving(cluster, data_dir, issuer.url, DB_TIMEOUT=str(DB_TIMEOUT)) as running:
        yield running


@pytest.fixture
def whole(cluster: PatroniCluster) -> PatroniCluster:
    """The cluster with three members again before a drill (a lost one replaced: a clone
    of the primary, the slowest step; the drills that lose none run first)."""
    for member in cluster.members:
        if member.patroni_pid() is None or not _alive(member.patroni_pid()):
            cluster.start_member(member, fresh=True)
    cluster.wait_healthy()
    return cluster


def _alive(pid: int | None) -> bool:
    return pid is not None and Path(f"/proc/{pid}").exists()


def _burst(service: Service, issuer, prefix: str, items: int) -> Burst:
    reads = tuple(path for item_id in SEEDED[:5] for path in (
        f"/data/collections/{COLLECTION}/items/{item_id}",
        f"/data/search?collections={COLLECTION}&limit=5"))
    return Burst(service.base, issuer.token("driller", ttl=3600),
                 issuer.token("driller", client=PROCESS_CLIENT, ttl=3600), COLLECTION,
                 read_paths=reads, prefix=prefix, items=items, jobs=items // 10,
                 catalogs=items // 20)


def _long_job(service: Service, issuer) -> tuple[str, dict[str, str]]:
    headers = {"Authorization": f"Bearer {issuer.token('runner', client=PROCESS_CLIENT)}"}
    r = httpx.post(f"{service.base}/processes/processes/sleep/execution",
                   json={"processInputs": {"seconds": LONG_JOB}}, headers=headers)
    assert r.status_code == 201, r.text
    url = r.headers["location"]
    deadline = time.monotonic() + 60
    while httpx.get(url, headers=headers).json()["status"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return url, headers


def _ended(url: str, headers: dict[str, str], seconds: float = 300) -> dict:
    """The job once ended (bounded: not a timing assertion); answers of 503 are waited
    out."""
    deadline = time.monotonic() + seconds
    while True:
        r = httpx.get(url, headers=headers, timeout=None)
        if r.status_code == 200 and r.json()["status"] in ("successful", "failed",
                                                            "dismissed"):
            return r.json()
        assert time.monotonic() < deadline, r.text
        time.sleep(0.5)


def _drill(cluster: PatroniCluster, service: Service, issuer, prefix: str, fault,
           size: int = 2000) -> dict:
    """A burst with a job running (`size` item POSTs, a tenth as many job submissions, a
    twentieth as many catalog POSTs), `fault(cluster)` once a third of the items are in;
    the figures every drill asserts."""
    pids = service.pids()
    refused_before = _counted(service.base, "POST", ITEMS_ROUTE, "5xx")
    job_url, job_headers = _long_job(service, issuer)
    burst = _burst(service, issuer, prefix, size)
    burst.start()
    while len(burst.acknowledged("item")) < burst.items // 3:
        time.sleep(0.05)
    faulted = time.monotonic()
    fault(cluster)
    burst.join()
    long_job = _ended(job_url, job_headers)
    items = {a.key for a in burst.acknowledged("item")}
    catalogs = {a.key for a in burst.acknowledged("catalog")}
    jobs = {a.location.rsplit("/", 1)[-1] for a in burst.acknowledged("job")}
    writes = [a for a in burst.answers if a.kind != "read"]
    recovered: dict[str, float | None] = {
        kind: min((a.sent + a.seconds - faulted for a in writes if a.kind == kind
                   and a.sent >= faulted and 200 <= a.status < 300), default=None)
        for kind in ("item", "job", "catalog")}
    known = [seconds for seconds in recovered.values() if seconds is not None]
    figures = {
        "burst": burst, "faulted": faulted, "items": items, "catalogs": catalogs,
        "jobs": jobs | {job_url.rsplit("/", 1)[-1]},
        "statuses": sorted({a.status for a in burst.answers}),
        "slowest": max(a.seconds for a in burst.answers),
        "recovered": max(known) if len(known) == len(recovered) else None,
        "long_job": long_job, "pids": (pids, service.pids()),
        # what the metrics count of the items' 503s
        "counted_503": _counted(service.base, "POST", ITEMS_ROUTE, "5xx") - refused_before,
    }
    refused = [a for a in writes if a.status == 503]
    reads = [a for a in burst.answers if a.kind == "read"]
    print(f"\n{prefix}: {len(items)} items, {len(jobs)} jobs and {len(catalogs)} catalogs "
          f"acknowledged, "
          f"{len(refused)} writes answered 503, writes again after "
          f"{recovered}; slowest answer {figures['slowest']:.2f} s "
          f"(writes p50 {statistics.median(a.seconds for a in writes):.3f} s); reads: "
          f"{sum(a.status == 200 for a in reads)} x 200, "
          f"{sum(a.status == 503 for a in reads)} x 503; statuses {figures['statuses']}")
    return figures


#: The route template the metrics count item POSTs under.
ITEMS_ROUTE = "/data/collections/{collection_id}/items"


def _counted(base: str, method: str, route: str, status: str) -> float:
    """`geocatalog_http_requests_total` of one route and status class, as a scrape of the
    service says (its API workers' counts added up)."""
    labels = (f'method="{method}"', f'route="{route}"', f'status="{status}"')
    return sum(float(line.rsplit(" ", 1)[1])
               for line in httpx.get(f"{base}/metrics").text.splitlines()
               if line.startswith("geocatalog_http_requests_total{")
               and all(label in line for label in labels))


def _assert_nothing_acknowledged_lost(cluster: PatroniCluster, figures: dict) -> None:
    with primary(cluster) as conn:
        items = {row[0] for row in conn.execute(
            "SELECT id FROM pgstac.items WHERE collection = %s AND id = ANY(%s)",
            (COLLECTION, list(figures["items"])))}
        jobs = {str(row[0]) for row in conn.execute(
            "SELECT id FROM processes.jobs WHERE id = ANY(%s::uuid[])",
            (list(figures["jobs"]),))}
        catalogs = {row[0] for row in conn.execute(
            "SELECT id FROM catalogs.catalogs WHERE id = ANY(%s)",
            (list(figures["catalogs"]),))}
    assert figures["items"] - items == set()
    assert figures["jobs"] - jobs == set()
    assert figures["catalogs"] - catalogs == set()


def _assert_jobs_ran_once(cluster: PatroniCluster, figures: dict) -> None:
    """Every acknowledged job ended successfully, its run started once (`attempts`: a
    queue job taken again after a fetch whose answer the fault lost counts no run), its
    end recorded once."""
    ids = list(figures["jobs"])
    deadline = time.monotonic() + 300
    with primary(cluster) as conn:
        while _one(conn, "SELECT count(*) FROM processes.jobs WHERE id = ANY(%s::uuid[]) "
                   "AND finished IS NULL", ids):
            # bounded: not a timing assertion; what is left unfinished, by the job record's
            # status and its queue job's
            assert time.monotonic() < deadline, conn.execute(
                "SELECT j.status, q.status, count(*) FROM processes.jobs j LEFT JOIN "
                "procrastinate.procrastinate_jobs q ON q.id = j.queue_job_id "
                "WHERE j.id = ANY(%s::uuid[]) AND j.finished IS NULL GROUP BY 1, 2",
                (ids,)).fetchall()
            time.sleep(0.5)
        rows = conn.execute(
            "SELECT j.status, j.attempts, "
            " (SELECT count(*) FROM procrastinate.procrastinate_events e "
            "  WHERE e.job_id = j.queue_job_id AND e.type IN "
            "  ('succeeded', 'failed', 'cancelled', 'aborted')) "
            "FROM processes.jobs j WHERE j.id = ANY(%s::uuid[])", (ids,)).fetchall()
    assert len(rows) == len(ids)
    assert {tuple(row) for row in rows} == {("successful", 1, 1)}


def _assert_the_service_rode_it_out(figures: dict) -> None:
    assert set(figures["statuses"]) <= {200, 201, 409, 503}, figures["statuses"]
    reads = {a.status for a in figures["burst"].answers if a.kind == "read"}
    assert reads <= {200, 503}, reads
    assert figures["slowest"] <= HANG
    assert figures["recovered"] is not None and figures["recovered"] <= RECOVERED
    before, after = figures["pids"]
    assert before == after  # no process of the service restarted
    job = figures["long_job"]
    assert (job["status"], job.get("message")) == ("successful", "finished"), job


def _one(conn: psycopg.Connection, query: str, *params: object) -> Any:
    """The first column of the first row."""
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def _until(condition: Callable[[], object], seconds: float = 60) -> None:
    """Poll `condition` until it holds (bounded: not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_a_primary_fenced_read_only_takes_no_write(whole, service, issuer) -> None:
    """A primary made read-only under the service's connections (as a fencing tool or an
    operator does, `default_transaction_read_only`): writes answer 503 with Retry-After,
    none is written, and once it takes writes again they succeed, no process restarted."""
    pids, leader = service.pids(), whole.leader()
    assert leader is not None
    items = f"/data/collections/{COLLECTION}/items"
    data = {"Authorization": f"Bearer {issuer.token('fencer')}"}
    jobs = {"Authorization": f"Bearer {issuer.token('fencer', client=PROCESS_CLIENT)}"}
    with httpx.Client(base_url=service.base, timeout=None) as client:
        for n in range(8):  # both API workers hold connections to it
            r = client.post(items, json=make_item(f"fence-before-{n}"), headers=data)
            assert r.status_code == 201, r.text
        with psycopg.connect(whole.member_url(leader), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET default_transaction_read_only = on")
            conn.execute("SELECT pg_reload_conf()")
        # the postmaster passes the reload on to each session, which takes it at its next
        # statement: give the signals a moment
        time.sleep(1)
        try:
            fenced = [client.post(items, json=make_item(f"fence-{n}"), headers=data)
                      for n in range(12)]
            job = client.post("/processes/processes/echo/execution",
                              json={"processInputs": {}}, headers=jobs)
        finally:
            with psycopg.connect(whole.member_url(leader), autocommit=True) as conn:
                conn.execute("SET default_transaction_read_only = off")
                conn.execute("ALTER SYSTEM RESET default_transaction_read_only")
                conn.execute("SELECT pg_reload_conf()")
        assert {(r.status_code, r.headers.get("retry-after")) for r in fenced} == {
            (503, "5")}, [r.text for r in fenced]
        assert {r.json()["description"] for r in fenced} <= {
            "The database accepts no writes just now (its primary is changing); retry "
            "shortly.", "The database is unavailable; retry shortly."}
        assert (job.status_code, job.json()["type"].rsplit("/", 1)[-1]) == (503, "unavailable")
        answers: list[int] = []

        def landed() -> bool:
            answers.append(client.post(items, json=make_item(f"fence-after-{len(answers)}"),
                                       headers=data).status_code)
            return answers[-1] == 201

        _until(landed)
        r = client.post("/processes/processes/echo/execution", json={"processInputs": {}},
                        headers=jobs)
        assert r.status_code == 201, r.text
    with primary(whole) as conn:
        written = {row[0] for row in conn.execute(
            "SELECT id FROM pgstac.items WHERE id LIKE 'fence-%%'")}
    assert not {f"fence-{n}" for n in range(12)} & written
    assert service.pids() == pids


def test_the_primary_postmaster_killed_alone(whole, service, issuer) -> None:
    """Patroni starts the postmaster again in place: the same member leads, nothing
    acknowledged is lost."""
    old = whole.leader()
    assert old is not None
    figures = _drill(whole, service, issuer, "postmaster", lambda c: c.kill_postmaster(old),
                     size=SMALLER)
    assert whole.leader() == old
    _assert_the_service_rode_it_out(figures)
    _assert_nothing_acknowledged_lost(whole, figures)
    _assert_jobs_ran_once(whole, figures)
    print(json.dumps(whole.history()))


def test_a_point_in_time_restore_between_two_writes(whole, service, issuer,
                                                     tmp_path: Path) -> None:
    """A full backup with pgBackRest, a write, a moment, a write: restored to that moment,
    the database holds exactly the writes before it; `geocatalog migrate` then `/healthz`
    says ready."""
    whole.backup()
    items = f"{service.base}/data/collections/{COLLECTION}/items"
    data = {"Authorization": f"Bearer {issuer.token('restorer')}"}
    assert httpx.post(items, json=make_item("pitr-before"), headers=data).status_code == 201
    with primary(whole) as conn:
        moment = _one(conn, "SELECT clock_timestamp()::text")
        before = {row[0] for row in conn.execute("SELECT id FROM pgstac.items")}
    assert httpx.post(items, json=make_item("pitr-after"), headers=data).status_code == 201
    leader = whole.leader()
    assert leader is not None
    whole.backrest(leader, "check")  # the WAL holding both switched and archived
    restored = whole.restore(whole.root / "restored", moment, free_port())
    try:
        with psycopg.connect(restored.dsn) as conn:
            after = {row[0] for row in conn.execute("SELECT id FROM pgstac.items")}
        assert after == before and "pitr-before" in after
        out = run_cli("migrate", env={"DATABASE_URL": restored.dsn})
        assert out.returncode == 0, out.stderr[-2000:]
        port = free_port()
        env = {**os.environ, "DATABASE_URL": restored.dsn, "MIGRATE_ON_START": "false",
               "IN_PROCESS_WORKER": "false", "LOAD_DEMO_DATA": "false",
               "OIDC_ISSUER": issuer.url, "GEOCATALOG_DATA_DIR": str(tmp_path / "data")}
        with uvicorn_process("stac_ext.app:create_app", port, env, "/healthz"):
            health = httpx.get(f"http://127.0.0.1:{port}/healthz")
        assert (health.status_code, health.json()["status"]) == (200, "UP")
    finally:
        restored.stop()
        shutil.rmtree(whole.root / "restored")


def test_the_primary_machine_lost_with_synchronous_replication(whole, service, issuer
                                                               ) -> None:
    old = whole.leader()
    assert old is not None
    figures = _drill(whole, service, issuer, "sync", lambda c: c.kill_machine(old))
    new = whole.leader()
    assert new is not None and new != old
    _assert_the_service_rode_it_out(figures)
    _assert_nothing_acknowledged_lost(whole, figures)
    _assert_jobs_ran_once(whole, figures)
    reads = [a for a in figures["burst"].answers if a.kind == "read"]
    during = [a for a in reads if figures["faulted"] <= a.sent
              <= figures["faulted"] + figures["recovered"]]
    assert 200 in {a.status for a in during}  # reads went on from a replica
    # the metrics counted every 503 the writers of items were answered
    assert figures["counted_503"] == sum(
        a.status == 503 for a in figures["burst"].answers if a.kind == "item")
    print(json.dumps(whole.history()))


def test_the_primary_machine_lost_with_asynchronous_replication(whole, service, issuer
                                                                ) -> None:
    """Without synchronous replication a failover may lose what the promoted replica had
    not received when the primary died: at most `maximum_lag_on_failover` bytes of WAL
    (Patroni promotes no replica further behind), measured here in the dead primary's own
    WAL, past the point where the new primary's timeline began."""
    whole.configure(synchronous_mode=False)
    try:
        _until(lambda: not any(m.get("role") == "sync_standby"
                               for m in whole.state()["members"]))
        old = whole.leader()
        assert old is not None
        timeline = next(m["timeline"] for m in whole.state()["members"]
                        if m["name"] == old.name)
        figures = _drill(whole, service, issuer, "async", lambda c: c.kill_machine(old),
                         size=SMALLER)
        switch = next(lsn_number_of(entry[1]) for entry in whole.history()
                      if entry[0] == timeline)
        lost_bytes = whole.end_of_wal(old, timeline, switch) - switch
        with primary(whole) as conn:
            present = {row[0] for row in conn.execute(
                "SELECT id FROM pgstac.items WHERE collection = %s AND id = ANY(%s)",
                (COLLECTION, list(figures["items"])))}
        lost = figures["items"] - present
        print(f"async: {len(lost)} acknowledged items lost, {lost_bytes} bytes of WAL the "
              f"new primary never had")
        assert 0 <= lost_bytes <= MAXIMUM_LAG_ON_FAILOVER
        _assert_the_service_rode_it_out(figures)
    finally:
        whole.configure(synchronous_mode=True)


def lsn_number_of(value: int | str) -> int:
    """Patroni's `/history` gives a timeline's end as a number (or as `X/Y`)."""
    return value if isinstance(value, int) else lsn_number(value)
