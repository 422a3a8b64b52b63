"""One user cannot stop everyone's jobs: a user's queued and running jobs are bounded (a
429 beyond, with `Retry-After`), and so are their jobs running at once, so another user's
job starts while the first one's backlog waits."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.service.test_metrics import scrape, value
from tests.support.issuer import PROCESS_CLIENT
from tests.support.jobs import execute, wait_for
from tests.support.paths import ROOT
from tests.support.product import Product, running

pytestmark = pytest.mark.slow


async def test_a_users_backlog_does_not_hold_another_users_job(service_app, issuer) -> None:
    data_dir = ROOT / ".artifacts" / f"quotas-{uuid.uuid4().hex[:8]}"
    async with service_app(
            geocatalog_data_dir=data_dir, job_queue=f"quotas-{uuid.uuid4().hex[:8]}",
            in_process_worker=True, worker_concurrency=2,
            # the defaults' rule (one running job a user), a small queue to reach
            job_user_running=1, job_user_queued=5, job_project_queued=500) as service:
        bob = service.client(issuer.token("bob", client=PROCESS_CLIENT))
        alice = service.client(issuer.token("alice", client=PROCESS_CLIENT))
        # bob: two long jobs (the worker has two slots), then echoes up to his quota
        sleeping = [(await execute(bob, "sleep", {"seconds": 3600})).headers["Location"]
                    for _ in range(2)]
        echoes = [await execute(bob, "echo", {"message": f"bob {n}"}) for n in range(4)]
        assert [r.status_code for r in echoes] == [201, 201, 201, 429]
        refused = echoes[-1]
        assert refused.headers["Retry-After"] == "30"
        assert refused.json() == {
            "type": "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/"
                    "too-many-jobs", "title": "Too Many Requests", "status": 429,
            "detail": "You have 5 jobs queued or running, the most one user may have "
                      "(JOB_USER_QUEUED); submit more once some have ended."}
        assert (await wait_for(bob, sleeping[0], "running"))["status"] == "running"

        # alice's job runs at once, in the slot bob's backlog may not take
        submitted = time.monotonic()
        r = await execute(alice, "echo", {"message": "alice"})
        assert r.status_code == 201, r.text
        job = await wait_for(alice, r.headers["Location"], "successful", "failed")
        print(f"alice's echo ended {time.monotonic() - submitted:.2f} s after submission")
        assert job["status"] == "successful", job
        # ...while bob's second long job and his echoes still wait for his first
        states = [(await bob.get(url)).json()["status"]
                  for url in [*sleeping, *(e.headers["Location"] for e in echoes[:3])]]
        assert states == ["running", "accepted", "accepted", "accepted", "accepted"]
        samples = await scrape(alice)
        assert {quota: value(samples, "geocatalog_job_quota", quota=quota)
                for quota in ("user_running", "user_queued", "project_queued")} == \
            {"user_running": 1, "user_queued": 5, "project_queued": 500}
        assert value(samples, "geocatalog_jobs_refused_total", quota="user_queued") >= 1
        for url in [*sleeping, *(e.headers["Location"] for e in echoes[:3])]:
            assert (await bob.delete(url)).status_code == 200


async def test_free_workers_take_users_jobs_in_turns(service_app, issuer) -> None:
    """A user who arrives behind another's backlog waits for one of its jobs, not for all of
    them: everyone's next job runs before anyone's job after it; a user's own jobs keep
    their order."""
    async with service_app(
            geocatalog_data_dir=ROOT / ".artifacts" / f"turns-{uuid.uuid4().hex[:8]}",
            job_queue=f"turns-{uuid.uuid4().hex[:8]}", in_process_worker=True,
            worker_concurrency=1, job_user_running=1, job_user_queued=10) as service:
        # users of their own: a queue lock is a user's in every queue
        carol, dan, erin = (service.client(issuer.token(name, client=PROCESS_CLIENT))
                            for name in ("carol", "dan", "erin"))
        # the one slot held while dan queues three jobs, then erin one
        holding = (await execute(carol, "sleep", {"seconds": 3600})).headers["Location"]
        assert (await wait_for(carol, holding, "running"))["status"] == "running"
        queued = {f"dan {n}": (dan, (await execute(dan, "echo", {"message": f"dan {n}"}))
                               .headers["Location"]) for n in range(3)}
        queued["erin"] = (erin, (await execute(erin, "echo", {"message": "erin"}))
                          .headers["Location"])
        assert (await carol.delete(holding)).status_code == 200
        ended = {name: await wait_for(client, url, "successful", "failed", seconds=600)
                 for name, (client, url) in queued.items()}
        assert {name: job["status"] for name, job in ended.items()} == \
            dict.fromkeys(queued, "successful")
        assert sorted(ended, key=lambda name: ended[name]["started"]) == \
            ["dan 0", "erin", "dan 1", "dan 2"]


async def test_a_users_next_job_runs_once_the_last_ends(service_app, issuer) -> None:
    """A job's end lets its owner's next job run at once: its worker is told, as when a job
    is queued (an idle worker looks for jobs it was not told of only every
    JOB_POLL_SECONDS, here an hour)."""
    async with service_app(
            geocatalog_data_dir=ROOT / ".artifacts" / f"next-{uuid.uuid4().hex[:8]}",
            job_queue=f"next-{uuid.uuid4().hex[:8]}", in_process_worker=True,
            worker_concurrency=2, job_user_running=1, job_poll_seconds=3600) as service:
        fay = service.client(issuer.token("fay", client=PROCESS_CLIENT))
        queued = [(await execute(fay, "echo", {"message": f"fay {n}"})).headers["Location"]
                  for n in range(3)]
        ended = [await wait_for(fay, url, "successful", "failed", seconds=600)
                 for url in queued]
        assert [job["status"] for job in ended] == ["successful"] * 3


@pytest.fixture(scope="module")
def product(settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Product]:
    """The service as run, two API processes answering at once, small queued quotas."""
    with running(settings, tmp_path_factory.mktemp("quotas"), api_workers=2,
                 JOB_USER_QUEUED="5", JOB_PROJECT_QUEUED="7", JOB_USER_RUNNING="1",
                 SYNC_WAIT_SECONDS="1",
                 EXTRA_PROCESSES="tests.support.processes:TEST_PROCESSES") as made:
        yield made


async def at_once(base: str, token: str, n: int, process: str, body: dict, **headers: str
                  ) -> list[httpx.Response]:
    """`n` submissions sent together, each on a connection of its own."""
    async def one() -> httpx.Response:
        async with httpx.AsyncClient(base_url=base, timeout=120, headers={
                "Authorization": f"Bearer {token}", **headers}) as client:
            return await client.post(f"/processes/processes/{process}/execution", json=body)
    return list(await asyncio.gather(*(one() for _ in range(n))))


def dismissed(base: str, token: str, answers: list[httpx.Response]) -> None:
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}) as client:
        for r in answers:
            if r.status_code == 201:
                assert client.delete(r.headers["Location"]).status_code == 200


@pytest.mark.parametrize(("n", "project", "quota", "sync"), [
    (150, None, 5, False), (40, "quota-lab", 7, False), (12, None, 5, True)])
async def test_a_quota_holds_under_concurrent_submissions(
        product: Product, issuer, n: int, project: str | None, quota: int,
        sync: bool) -> None:
    """150 concurrent submissions got 15 accepted against a quota of 5, 40 got 7, and 12
    concurrent synchronous executions were all accepted: counted apart from the insert."""
    user = f"crowd-{uuid.uuid4().hex[:6]}"
    groups = [project] if project else []
    token = issuer.token(user, client=PROCESS_CLIENT, groups=groups, ttl=3600)
    body = {"processInputs": {"seconds": 3600},
            **({"metadata": {"project": project}} if project else {})}
    tokens = [token]
    if project:  # the project's quota: two members submitting together
        tokens.append(issuer.token(f"{user}-2", client=PROCESS_CLIENT, groups=groups,
                                   ttl=3600))
    # synchronous: a process that offers it (test-nap), waited for a second, then a job
    process, prefer = ("test-nap", {"Prefer": "respond-sync"}) if sync else ("sleep", {})
    sent = await asyncio.gather(*(at_once(product.base, each, n // len(tokens), process, body,
                                          **prefer) for each in tokens))
    answers = [r for answered in sent for r in answered]
    try:
        statuses = sorted(r.status_code for r in answers)
        assert statuses == [201] * quota + [429] * (n - quota), statuses
        said = {r.json()["detail"].partition(",")[0] for r in answers if r.status_code == 429}
        assert ("The project has 7 jobs queued or running" if project else
                "You have 5 jobs queued or running") in said, said
    finally:
        for each, answered in zip(tokens, sent, strict=True):
            dismissed(product.base, each, answered)
