"""The job engine under failure: a worker killed mid-job, an API restart, secrets."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator

import httpx
import owslib.ogcapi
import psycopg
import pytest
from owslib.ogcapi.processes import Processes
from psycopg import sql

from tests.support.issuer import PROCESS_CLIENT
from tests.support.jobs import execute, wait_for
from tests.support.roles import role_env


def start_worker(settings, queue: str) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": settings.database_url,
           **role_env(settings.database_url), "JOB_QUEUE": queue,
           "GEOCATALOG_DATA_DIR": str(settings.data_dir), "OIDC_ISSUER": settings.oidc_issuer,
           "JOB_HEARTBEAT_SECONDS": "0.5", "JOB_STALLED_SECONDS": "3",
           "EXTRA_PROCESSES": "tests.support.processes:TEST_PROCESSES"}
    return subprocess.Popen([sys.executable, "-m", "stac_ext.cli", "worker", "--concurrency",
                             "2"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


@pytest.fixture
def queue() -> Iterator[str]:
    yield f"test-{uuid.uuid4().hex[:8]}"


@pytest.mark.slow
async def test_worker_killed_mid_job(app, service_app, settings, issuer, queue: str) -> None:
    """A job of a killed worker ends `failed`, or is retried when its process allows it."""
    first = start_worker(settings, queue)
    second = None
    try:
        async with service_app(job_queue=queue, in_process_worker=False) as submitter:
            c = submitter.client(issuer.token("alice", client=PROCESS_CLIENT))
            doomed = (await execute(c, "sleep", {"seconds": 120})).headers["Location"]
            retried = (await execute(c, "test-nap", {"seconds": 2})).headers["Location"]
            for url in (doomed, retried):
                assert (await wait_for(c, url, "running"))["status"] == "running"
            first.send_signal(signal.SIGKILL)
            first.wait()

            # the in-process worker of the session app reaps jobs of dead workers
            job = await wait_for(c, doomed, "failed", seconds=60)
            assert job["status"] == "failed"
            assert "worker running this job stopped" in job["message"]
            job = await wait_for(c, retried, "accepted", "failed", seconds=60)
            assert job["status"] == "accepted", job
            second = start_worker(settings, queue)
            job = await wait_for(c, retried, "successful", "failed", seconds=60)
            assert job["status"] == "successful", job
    finally:
        for worker in (first, second):
            if worker and worker.poll() is None:
                worker.terminate()
                worker.wait(timeout=30)


@pytest.mark.slow
async def test_a_stopping_worker_ends_its_jobs(app, service_app, settings, issuer,
                                               queue: str) -> None:
    """A service stopping with jobs running lets them run for JOB_SHUTDOWN_SECONDS, then
    ends them: queued again when their process allows a retry, else failed. It stops
    (the test returns), and no job is left `running`."""
    async with service_app(job_queue=queue, in_process_worker=True,
                           job_shutdown_seconds=0.5) as stopping:
        c = stopping.client(issuer.token("alice", client=PROCESS_CLIENT))
        doomed = (await execute(c, "sleep", {"seconds": 120})).headers["Location"]
        retried = (await execute(c, "test-nap", {"seconds": 120})).headers["Location"]
        for url in (doomed, retried):
            assert (await wait_for(c, url, "running"))["status"] == "running"
    async with service_app(job_queue=queue) as without_worker:
        c = without_worker.client(issuer.token("alice", client=PROCESS_CLIENT))
        job = (await c.get(doomed)).json()
        assert (job["status"], job["message"]) == (
            "failed", "The worker running this job was shut down before the job finished.")
        job = (await c.get(retried)).json()
        assert (job["status"], job["message"]) == ("accepted", "worker stopped; queued again")
    async with await psycopg.AsyncConnection.connect(settings.database_url) as owner:
        queued = await (await owner.execute(
            "SELECT status, args->>'job_id' FROM procrastinate.procrastinate_jobs "
            "WHERE queue_name = %s AND status = 'todo'", (queue,))).fetchall()
        assert queued == [("todo", retried.rsplit("/", 1)[1])]
        # not left behind (procrastinate's triggers name its tables unqualified)
        await owner.execute("SET search_path TO procrastinate")
        await owner.execute("DELETE FROM procrastinate_jobs WHERE queue_name = %s", (queue,))
        await owner.commit()


@pytest.mark.slow
async def test_a_job_taken_for_a_worker_that_never_got_it_runs_once(
        app, service_app, settings, issuer, queue: str) -> None:
    """A fetch whose commit reached the database but whose answer was lost (a failover)
    leaves a job `doing` for a live worker that never got it: here the fetch is made for
    the worker while it is paused. Its own reaper queues it again, and it runs once."""
    async with await psycopg.AsyncConnection.connect(settings.database_url,
                                                     autocommit=True) as owner:
        await owner.execute("SET search_path TO procrastinate")
        before = (await (await owner.execute(
            "SELECT coalesce(max(id), 0) FROM procrastinate_workers")).fetchone() or [0])[0]
        worker = start_worker(settings, queue)
        try:
            worker_id = None
            while worker_id is None:  # the worker registered
                row = await (await owner.execute(
                    "SELECT max(id) FROM procrastinate_workers WHERE id > %s",
                    (before,))).fetchone()
                worker_id = row[0] if row else None
                await asyncio.sleep(0.1)
            async with service_app(job_queue=queue, in_process_worker=False) as submitter:
                c = submitter.client(issuer.token("alice", client=PROCESS_CLIENT))
                worker.send_signal(signal.SIGSTOP)
                try:
                    url = (await execute(c, "echo", {"message": "orphan"})).headers["Location"]
                    taken = await (await owner.execute(
                        "SELECT id FROM procrastinate_fetch_job_v2(ARRAY[%s]::varchar[], %s)",
                        (queue, worker_id))).fetchone()
                    assert taken is not None and taken[0] is not None
                finally:
                    worker.send_signal(signal.SIGCONT)
                job = await wait_for(c, url, "successful", "failed", seconds=60)
                assert job["status"] == "successful", job
            # its run started once (`attempts`), its end recorded once, after the one
            # retry that queued it again
            row = await (await owner.execute(
                "SELECT j.attempts, array_agg(e.type::text ORDER BY e.id) "
                "FILTER (WHERE e.type NOT IN ('started', 'scheduled')) FROM processes.jobs j "
                "JOIN procrastinate_events e ON e.job_id = j.queue_job_id "
                "WHERE j.id = %s GROUP BY 1", (url.rsplit("/", 1)[1],))).fetchone()
            assert row == (1, ["deferred", "deferred_for_retry", "succeeded"])
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            await owner.execute("DELETE FROM procrastinate_jobs WHERE queue_name = %s",
                                (queue,))


@pytest.mark.slow
async def test_a_worker_another_pruned_registers_again_and_runs_jobs(
        service_app, settings, issuer, queue: str) -> None:
    """A worker whose heartbeat was late longer than its stalled and outage times (its
    process paused) is pruned from the queue's workers by the next worker that starts:
    the queue then refuses its every fetch of a job (its worker id is gone). That is an
    error of the query, not the database away: it registers again and runs the jobs,
    rather than wait out an "outage" that never ends."""
    async with service_app(job_queue=queue, in_process_worker=True) as service, \
            await psycopg.AsyncConnection.connect(settings.database_url,
                                                  autocommit=True) as owner:
        c = service.client(issuer.token("alice", client=PROCESS_CLIENT))
        url = (await execute(c, "echo", {"message": "before"})).headers["Location"]
        assert (await wait_for(c, url, "successful", "failed"))["status"] == "successful"
        # what procrastinate_prune_stalled_workers_v1 does to it
        pruned = await (await owner.execute(
            "DELETE FROM procrastinate.procrastinate_workers WHERE id = (SELECT worker_id "
            "FROM procrastinate.procrastinate_jobs j JOIN processes.jobs p "
            "ON p.queue_job_id = j.id WHERE p.id = %s) RETURNING id",
            (url.rsplit("/", 1)[1],))).fetchall()
        assert len(pruned) == 1
        url = (await execute(c, "echo", {"message": "after"})).headers["Location"]
        job = await wait_for(c, url, "successful", "failed")
        assert job["status"] == "successful", job
        again = await (await owner.execute(
            "SELECT j.worker_id FROM procrastinate.procrastinate_jobs j JOIN processes.jobs p "
            "ON p.queue_job_id = j.id WHERE p.id = %s", (url.rsplit("/", 1)[1],))).fetchone()
        assert again is not None and again[0] not in (None, pruned[0][0])


async def test_api_restart_between_submit_and_completion(app, service_app, issuer) -> None:
    token = issuer.token("alice", client=PROCESS_CLIENT)
    async with service_app(in_process_worker=False) as before:
        c = before.client(token)
        r = await execute(c, "sleep", {"seconds": 1.5})
        assert r.status_code == 201
        url = r.headers["Location"]
    # the session app's worker runs it meanwhile
    async with service_app(in_process_worker=False) as after:
        c = after.client(token)
        job = await wait_for(c, url, "successful", "failed")
        assert job["status"] == "successful"
        assert (await c.get(f"{url}/results")).json() == {"slept": 1.5}


async def test_a_job_is_recorded_only_when_it_is_queued(app, service_app, settings, issuer,
                                                       queue: str) -> None:
    """Record and queue entry are one transaction: when the queue refuses the job (here a
    real constraint on procrastinate's table, for this queue only), the client gets a 503
    and no job is left behind that no worker would ever take."""
    user = f"queued-{uuid.uuid4().hex[:6]}"
    refuse = sql.SQL("ALTER TABLE procrastinate.procrastinate_jobs ADD CONSTRAINT {} "
                     "CHECK (queue_name <> {}) NOT VALID").format(
        sql.Identifier(f"refuse_{queue}"), sql.Literal(queue))
    async with await psycopg.AsyncConnection.connect(settings.database_url,
                                                     autocommit=True) as owner:
        async with service_app(job_queue=queue, in_process_worker=False) as submitter:
            c = submitter.client(issuer.token(user, client=PROCESS_CLIENT))
            await owner.execute(refuse)
            try:
                r = await execute(c, "echo", {"message": "refused"})
            finally:
                await owner.execute(sql.SQL("ALTER TABLE procrastinate.procrastinate_jobs "
                                            "DROP CONSTRAINT {}").format(
                    sql.Identifier(f"refuse_{queue}")))
            assert (r.status_code, r.json()) == (503, {
                "type": "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/"
                        "unavailable", "title": "Service Unavailable", "status": 503,
                "detail": "The database is unavailable; retry shortly."})
            assert (await c.get("/processes/jobs")).json()["jobs"] == []
            assert (await execute(c, "echo", {"message": "taken"})).status_code == 201
        records = await (await owner.execute(
            "SELECT count(*) FROM processes.jobs WHERE owner = %s", (user,))).fetchone()
        queued = await (await owner.execute(
            "SELECT count(*) FROM procrastinate.procrastinate_jobs WHERE queue_name = %s",
            (queue,))).fetchone()
        assert (records, queued) == ((1,), (1,))


async def test_results_checked_against_the_outputs_schema(
        alice_processes: httpx.AsyncClient) -> None:
    """Each time (the schema's validator is made once per process, then reused)."""
    for _ in range(2):
        r = await execute(alice_processes, "test-miscount", {})
        job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
        assert (job["status"], job["message"]) == (
            "failed", "The process returned results that do not match its outputs schema: "
                      "'many' is not of type 'integer'")
    r = await execute(alice_processes, "echo", {"message": "fine"})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job


async def test_secrets_never_leave(alice_processes: httpx.AsyncClient, app, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    password, secret, token = "PW-5e1f9a", "SK-93b2c7", "TK-77d0e4"
    inputs = {"demo": True, "credentials": {"username": "u", "password": password},
              "s3": {"accessKeyId": "AKIA-visible", "secretAccessKey": secret,
                     "sessionToken": token}}
    r = await execute(alice_processes, "s3-manifest", inputs)
    assert r.status_code == 201, r.text
    url = r.headers["Location"]
    seen = [r.text]
    async with app.state.writepool.acquire() as conn:  # while queued or running
        seen.append(str(await conn.fetch("SELECT j::text FROM processes.jobs j")))
        seen.append(str(await conn.fetch(
            "SELECT args::text FROM procrastinate.procrastinate_jobs")))
    job = await wait_for(alice_processes, url, "successful", "failed")
    assert job["status"] == "successful", job
    failing = await execute(alice_processes, "test-fail", {"token": token})
    failed = await wait_for(alice_processes, failing.headers["Location"], "failed")
    assert "***" in failed["message"]
    for path in (url, f"{url}/results", failing.headers["Location"], "/processes/jobs"):
        seen.append((await alice_processes.get(path)).text)
    async with app.state.writepool.acquire() as conn:
        rows = await conn.fetch("SELECT j::text AS row, secrets FROM processes.jobs j "
                                "WHERE id = $1", uuid.UUID(job["jobID"]))
        seen.append(str(rows))
        assert rows[0]["secrets"] is None  # erased once the job ended
    seen.append(caplog.text)
    everything = "\n".join(seen)
    for value in (password, secret, token):
        assert value not in everything
    assert "AKIA-visible" in everything  # not secret: stays visible


async def test_owslib_lists_describes_executes(app, live_server: str, issuer) -> None:
    """The live server (a real uvicorn) takes OWSLib's requests; the session app's worker,
    on this event loop, runs the job: OWSLib's blocking calls go to a thread."""
    token = issuer.token("ows", client=PROCESS_CLIENT)
    defaults = dict(owslib.ogcapi.REQUEST_HEADERS)
    client = Processes(f"{live_server}/processes/",
                       headers={"Authorization": f"Bearer {token}"})
    # OWSLib adds a client's headers to its module's defaults, which every later client
    # then sends (this token on the data API's reads: a 403): this client's are its own
    client.headers = dict(client.headers)
    owslib.ogcapi.REQUEST_HEADERS.clear()
    owslib.ogcapi.REQUEST_HEADERS.update(defaults)
    listed = await asyncio.to_thread(client.processes)
    assert {"echo", "sleep", "s3-manifest"} <= {p["id"] for p in listed}
    described = await asyncio.to_thread(client.process, "echo")
    assert described["inputs"]["properties"]["message"]["type"] == "string"
    results = await asyncio.to_thread(client.execute, "echo", {"message": "sync"})
    assert results == {"message": "sync", "object": None}  # echo is `sync-execute`
    status = await asyncio.to_thread(client.execute, "echo", {"message": "from owslib"},
                                     async_=True)
    assert status["status"] == "accepted" and status["processID"] == "echo"
    url = f"{live_server}/processes/jobs/{status['jobID']}"
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        job = await wait_for(http, url, "successful", "failed")
        assert job["status"] == "successful"
        assert (await http.get(f"{url}/results")).json()["message"] == "from owslib"


async def test_job_processes_see_no_worker_secrets(alice_processes: httpx.AsyncClient,
                                                   monkeypatch) -> None:
    """A process runs user-chosen paths on user input: the worker's database URL and
    secrets key stay with the worker (publish-dataset, which writes items, gets the URL)."""
    for name in ("DATABASE_URL", "API_DATABASE_URL", "WORKER_DATABASE_URL",
                 "JOB_DATABASE_URL"):
        monkeypatch.setenv(name, "postgresql://worker:secret@127.0.0.1/db")
    monkeypatch.setenv("JOB_SECRETS_KEY", "q2Yw8b0m1Qw0mJm7c8pQk4Q0v3dE2T7b3Zq0n6wX9aY=")
    r = await execute(alice_processes, "test-environment", {})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job
    results = await alice_processes.get(f"{r.headers['Location']}/results")
    assert results.json() == {"DATABASE_URL": False, "API_DATABASE_URL": False,
                              "WORKER_DATABASE_URL": False, "JOB_DATABASE_URL": False,
                              "JOB_SECRETS_KEY": False}


@pytest.mark.parametrize(("resources", "detail"), [
    ({"limits": {"cpu": "9" * 400}}, "processInputs do not match the process's inputs "
     "schema: resources/limits/cpu: is not in the form expected (Kubernetes CPU quantity: "
     "`2`, `0.5`, `500m`)"),
    ({"requests": {"memory": "9" * 400}}, "processInputs do not match the process's inputs "
     "schema: resources/requests/memory: is not in the form expected (Kubernetes memory "
     "quantity: `512Mi`, `4Gi`, `1G`)"),
    ({"limits": {"memory": "1000000000Ti"}}, "processInputs ask for more than a job may "
     "have: resources/limits/memory: at most 16Gi (JOB_MEMORY_MAX)"),
    # the operator's most memory (JOB_MEMORY_MAX); and 0 is not "no limit"
    ({"limits": {"memory": "17Gi"}}, "processInputs ask for more than a job may have: "
     "resources/limits/memory: at most 16Gi (JOB_MEMORY_MAX)"),
    ({"requests": {"memory": "17Gi"}}, "processInputs ask for more than a job may have: "
     "resources/requests/memory: at most 16Gi (JOB_MEMORY_MAX)"),
    ({"limits": {"memory": "0"}}, "processInputs ask for more than a job may have: "
     "resources/limits/memory: more than 0"),
    ({"limits": {"cpu": "999999"}}, "processInputs ask for more than a job may have: "
     "resources/limits/cpu: at most 1024 cores"),
    ({"limits": {"memory": "1Gi"}, "requests": {"memory": "2Gi"}}, "processInputs ask for "
     "more than a job may have: resources/requests/memory: more than resources/limits/memory"),
])
async def test_resources_beyond_bounds_are_400(alice_processes: httpx.AsyncClient,
                                               resources: dict, detail: str) -> None:
    """Quantities that passed the schema overflowed in the engine and left their jobs
    `running` forever: they are bounded at submission."""
    r = await execute(alice_processes, "sleep", {"seconds": 0, "resources": resources})
    assert r.status_code == 400, r.text
    assert r.json()["type"].endswith("/invalid-input")
    assert r.json()["detail"].startswith(detail)


@pytest.mark.slow
async def test_a_job_the_engine_cannot_run_fails(service_app, settings, issuer, queue: str,
                                                 database_url: str) -> None:
    """Whatever goes wrong in the engine ends the job `failed`, with a message."""
    worker = None
    try:
        async with service_app(job_queue=queue, in_process_worker=False) as submitter:
            c = submitter.client(issuer.token("alice", client=PROCESS_CLIENT))
            url = (await execute(c, "echo", {"message": "x"})).headers["Location"]
            with psycopg.connect(database_url) as conn:  # what no submission can store
                conn.execute("UPDATE processes.jobs SET inputs = inputs || "
                             "'{\"resources\": {\"limits\": 5}}' WHERE id = %s",
                             (url.rsplit("/", 1)[1],))
            worker = start_worker(settings, queue)
            job = await wait_for(c, url, "failed", "successful", seconds=60)
            assert (job["status"], job["message"]) == (
                "failed", "The service could not run this job (TypeError); the error "
                "has been logged.")
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=30)
