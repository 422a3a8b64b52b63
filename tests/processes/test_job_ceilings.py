"""Every job has ceilings, whatever it asks: memory (its `/tmp` writes included), processes,
the size of its `/tmp`, wall time. A deployed tool that passes one fails, and its message
names the ceiling. (On this machine the memory and processes are counted by cgroup v1.)"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest

from process_api.runner.cgroups import Cgroups
from tests.support.cwl import greedy
from tests.support.issuer import PROCESS_CLIENT
from tests.support.jobs import execute, wait_for
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
async def dora(service_app, issuer) -> AsyncIterator[httpx.AsyncClient]:
    """A service whose operator set small ceilings, and dora, who deploys there."""
    data_dir = ROOT / ".artifacts" / f"ceilings-{uuid.uuid4().hex[:8]}"
    data_dir.mkdir(parents=True)
    token = issuer.token("dora", client=PROCESS_CLIENT, rights=["deployProcess"])
    async with service_app(
            geocatalog_data_dir=data_dir, job_queue=f"ceilings-{uuid.uuid4().hex[:8]}",
            in_process_worker=True, job_memory="1Gi", job_tmp_size="320Mi",
            job_processes=64, job_wall_seconds=15) as service:
        client = service.client(token)
        r = await client.post("/processes/processes", content=greedy("greedy"),
                              headers={"Content-Type": "application/cwl+yaml"})
        assert r.status_code in (201, 409), r.text
        yield client
    shutil.rmtree(data_dir, ignore_errors=True)


async def failed(client: httpx.AsyncClient, inputs: dict) -> str:
    r = await execute(client, "greedy", inputs)
    assert r.status_code == 201, r.text
    job = await wait_for(client, r.headers["Location"], "successful", "failed", seconds=120)
    assert job["status"] == "failed", job
    return job["message"]


def test_this_machine_offers_cgroups_to_jobs() -> None:
    """The ceilings below hold on the whole job here, not per process."""
    found = Cgroups.available()
    assert found is not None and found.version in (1, 2)


async def test_writing_past_tmp_fails_naming_it(dora: httpx.AsyncClient) -> None:
    message = await failed(dora, {"action": "fill", "amount": 400})
    assert message.startswith("The CWL run failed (cwltool exit status 1): "), message
    assert "No space left on device" in message
    assert message.endswith("(its /tmp is full: it holds 320Mi, JOB_TMP_SIZE)")


async def test_memory_counts_tmp_writes(dora: httpx.AsyncClient) -> None:
    """A job's `/tmp` is memory: writing past its memory limit there ends it (it raised
    the host's memory by gigabytes when only RLIMIT_DATA held)."""
    message = await failed(dora, {"action": "fill", "amount": 300,
                                  "resources": {"limits": {"memory": "200Mi"}}})
    assert message == ("Memory limit exceeded: the job needed more than 200Mi (its "
                       "resources.limits.memory).")


async def test_forking_past_the_process_limit_fails_naming_it(dora: httpx.AsyncClient) -> None:
    message = await failed(dora, {"action": "fork", "amount": 200})
    assert message.startswith("Process limit reached: the job asked for more than 64 "
                              "processes and threads at once (JOB_PROCESSES)."), message
    assert "BlockingIOError" in message  # what the tool met: fork refused


async def test_a_job_ends_at_its_wall_time(dora: httpx.AsyncClient) -> None:
    message = await failed(dora, {"action": "sleep", "amount": 600})
    assert message == ("Wall time limit reached: the job ran for 15 s (JOB_WALL_SECONDS) "
                       "and was stopped.")
