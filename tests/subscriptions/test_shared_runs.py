"""A standing job's runs are shared by the service's processes: each one follows the
submitted runs and takes up the submissions cut short, so two may act on the same run as
they both read it. The one that comes second changes nothing: a stale submission taken up
twice records its job once (and does not make the window due again: a second job), and a
job's end seen twice does not make a window due again once its next submission is under
way."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import psycopg
import pytest

from stac_ext.settings import Settings
from stac_ext.subscriptions import queries
from stac_ext.subscriptions.dispatcher import LEASE_SECONDS, Dispatcher, json_codecs
from stac_ext.subscriptions.signing import Signer
from stac_ext.subscriptions.standing_jobs import Processes
from stac_ext.subscriptions.webhooks import Webhooks
from tests.support.cluster import migrated_database
from tests.support.cwl import python_tool
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT, TestIssuer
from tests.support.stac import make_collection, make_item, unique

CWL_YAML = {"Content-Type": "application/cwl+yaml"}


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return migrated_database(database_url, "shared_runs_")


@pytest.fixture
async def service(service_app, database: str) -> AsyncIterator[Any]:
    """The service with no dispatcher (nor job worker): the test plays its processes' parts,
    one step at a time."""
    async with service_app(database=database, subscriptions_delivery=False) as started:
        yield started


@pytest.fixture
async def dispatcher(service, settings: Settings, database: str
                     ) -> AsyncIterator[tuple[Dispatcher, Processes]]:
    processes = Processes(app=service.app, data_prefix=settings.prefix_path,
                          processes_prefix=settings.processes_prefix,
                          clients=frozenset({settings.data_client_id,
                                             settings.process_client_id}))
    # a failed attempt's retry in 0.2 s
    settings = settings.model_copy(update={"webhook_retry_seconds": 0.01})
    made = Dispatcher(database, settings, Webhooks(Signer(bytes(32)), settings,
                                                   settings.prefix_path, LEASE_SECONDS),
                      processes)
    made.pool = await asyncpg.create_pool(database, min_size=0, max_size=2, init=json_codecs)
    try:
        yield made, processes
    finally:
        await made.pool.close()


async def test_two_processes_acting_on_one_run_make_one_outcome(
        service, dispatcher: tuple[Dispatcher, Processes], issuer: TestIssuer,
        database: str) -> None:
    shared, processes = dispatcher
    assert shared.pool is not None
    admin = service.client(issuer.token("root", rights=[ADMIN_RIGHT]))
    alice = service.client(issuer.token("alice"))
    deployer = service.client(issuer.token("alice", client=PROCESS_CLIENT,
                                           rights=["deployProcess"]))
    collection = unique("test_conv-shared_")
    assert (await admin.post("/data/collections", json=make_collection(collection))
            ).status_code == 201
    process = unique("count-")
    r = await deployer.post("/processes/processes", headers=CWL_YAML, content=python_tool(
        process, "import sys; print(len(sys.argv) - 1)", {"files": "'File[]'"},
        {"counted": "stdout"}))
    assert r.status_code == 201, r.text
    r = await alice.post("/data/subscriptions", json={
        "search": {"collections": [collection]},
        "job": {"process": process, "itemsInput": "files", "window": {"items": 1},
                "retries": 1}})
    assert r.status_code == 201, r.text
    runs_url = f"/data/subscriptions/{r.json()['id']}/runs"
    r = await alice.post(f"/data/collections/{collection}/items",
                         json=make_item("one", data="s3://nowhere/one.nc"))
    assert r.status_code == 201, r.text
    with psycopg.connect(database, autocommit=True) as conn:  # the matcher's round
        conn.execute("SELECT subscriptions.match(100)")

    # a process claims the window and submits its job, then stops before recording it
    async with shared.pool.acquire() as conn:
        run = await conn.fetchrow(queries.CLAIM_RUN)
        items = await conn.fetch(queries.RUN_ITEMS, run["subscription_id"], run["number"])
    status, job, _ = await processes.submit(run, items)
    assert status == 201, job
    job_url = f"http://testserver/processes/jobs/{job['jobID']}"
    # two others find it cut short, both before either takes it up
    async with shared.pool.acquire() as conn:
        [stale] = await conn.fetch(queries.STALE_SUBMISSIONS, 0)
    await shared.take_up(processes, stale)
    await shared.take_up(processes, stale)
    r = await alice.get(runs_url)
    assert r.status_code == 200
    [taken] = r.json()["runs"]
    assert (taken["status"], taken["job"], taken["jobs"], taken["attempts"],
            taken["message"]) == ("submitted", job_url, [job["jobID"]], 1, None)

    # two read the run as submitted; its job ends (dismissed); the first to look makes
    # the window due again (a retry is left), and it is claimed again at once...
    async with shared.pool.acquire() as conn:
        [submitted] = await conn.fetch(queries.SUBMITTED_RUNS, 50)
    assert (await deployer.delete(job_url)).status_code == 200
    await shared.follow(processes, submitted)
    r = await alice.get(runs_url)
    [due] = r.json()["runs"]
    assert (due["status"], due["attempts"], due["message"]) == (
        "due", 1, "Attempt 1 failed: Its job is gone (dismissed).")
    async with shared.pool.acquire() as conn:
        while await conn.fetchrow(queries.CLAIM_RUN) is None:  # its retry's wait
            await asyncio.sleep(0.05)
    # ...so the second one's look changes nothing: the new submission stays its own
    await shared.follow(processes, submitted)
    [again] = (await alice.get(runs_url)).json()["runs"]
    assert (again["status"], again["attempts"], again["jobs"], again["message"]) == (
        "submitting", 2, [job["jobID"]], "Attempt 1 failed: Its job is gone (dismissed).")
