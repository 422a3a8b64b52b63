"""Jobs run by a real one-node Slurm (`JOB_EXECUTOR=slurm`, `tests.support.slurm`): built-in
and deployed jobs with the local executor's results, the resources Slurm was asked for,
dismissal, a worker killed and started again, a Slurm job gone, the ceilings."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client import REGISTRY

from tests.support.containers import cdo_image, containers_of, shell_in
from tests.support.cwl import shout_tool
from tests.support.issuer import PROCESS_CLIENT, TestIssuer
from tests.support.jobs import execute, until, wait_for
from tests.support.paths import ROOT
from tests.support.roles import role_env
from tests.support.slurm import SlurmCluster

pytestmark = pytest.mark.slow
CWL_YAML = {"Content-Type": "application/cwl+yaml"}
ENDED = ("successful", "failed", "dismissed")


@pytest.fixture
def slurm(slurm_cluster: SlurmCluster) -> SlurmCluster:
    return slurm_cluster


@pytest.fixture
def shared(slurm: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The folder the workers share with the nodes; the workers' commands reach the
    cluster."""
    monkeypatch.setenv("SLURM_CONF", str(slurm.conf))
    folder = ROOT / ".artifacts" / f"slurm-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=True)


def slurm_settings(shared: Path, **more) -> dict:
    """The settings of a service whose worker runs jobs on Slurm (`service_app`'s)."""
    return {"job_executor": "slurm", "slurm_folder": shared, "job_cpu_max": 2,
            "job_memory_max": "1Gi", "job_memory": "256Mi", "worker_concurrency": 8,
            "job_queue": f"slurm-{uuid.uuid4().hex[:8]}", "in_process_worker": True, **more}


@pytest.fixture
async def service(service_app, issuer: TestIssuer, shared: Path) -> AsyncIterator[dict]:
    """The service whose worker runs jobs on Slurm; ann runs them, dora deploys."""
    ann = issuer.token("ann", client=PROCESS_CLIENT, groups=["ocean"])
    dora = issuer.token("dora", client=PROCESS_CLIENT, rights=["deployProcess"],
                        groups=["ocean"])
    async with service_app(**slurm_settings(shared)) as started:
        yield {"ann": started.client(ann), "dora": started.client(dora)}


async def ran(client: httpx.AsyncClient, process: str, inputs: dict, **body) -> dict:
    """The job's end (its status)."""
    r = await execute(client, process, inputs, **body)
    assert r.status_code == 201, r.text
    return await wait_for(client, r.headers["Location"], *ENDED, seconds=300)


async def results_of(client: httpx.AsyncClient, jobs: list[dict]) -> list[dict]:
    """Each job's results, a stored file's without its job's own URL."""
    found = []
    for job in jobs:
        assert job["status"] == "successful", job
        results = (await client.get(f"/processes/jobs/{job['jobID']}/results")).json()
        found.append({name: {k: v for k, v in value.items() if k != "href"}
                      if isinstance(value, dict) and "href" in value else value
                      for name, value in results.items()})
    return found


def in_slurm(slurm: SlurmCluster, job_id: str, prefix: str = "geocatalog-"
             ) -> list[tuple[str, str]]:
    """The Slurm jobs of a job (id, state) that Slurm still knows (`prefix`
    `geocatalog-step-`: its workflow's steps')."""
    lines = slurm.run("squeue", "-h", "--states=all", f"--name={prefix}{job_id}",
                      "-o", "%i %T").split()
    return list(zip(lines[::2], lines[1::2], strict=True))


async def slurm_job_of(slurm: SlurmCluster, job_id: str, state: str | None = "RUNNING"
                       ) -> str:
    """The Slurm job id of a job, once Slurm holds it in `state` (None: in any, once
    submitted: a short job may have ended before it is looked at)."""
    assert await until(lambda: [s for s, now in in_slurm(slurm, job_id)
                                if state in (None, now)], seconds=120)
    return in_slurm(slurm, job_id)[0][0]


async def message_of(client: httpx.AsyncClient, url: str, prefix: str) -> str:
    """The job's message once it starts with `prefix` (bounded: then as it is)."""
    for _ in range(100):
        message = str((await client.get(url)).json()["message"])
        if message.startswith(prefix):
            break
        await asyncio.sleep(0.1)
    return message


async def test_jobs_run_through_slurm_with_the_local_executors_results(
        service, service_app, settings, issuer: TestIssuer, shared: Path,
        slurm: SlurmCluster) -> None:
    """50 echo jobs and 10 deployed CWL jobs, each its own Slurm job, answer what the
    local executor answers."""
    ann, dora = service["ann"], service["dora"]
    tool = f"shout-{uuid.uuid4().hex[:6]}"
    r = await dora.post("/processes/processes", content=shout_tool(tool), headers=CWL_YAML,
                        params={"visibility": "project", "project": "ocean"})
    assert r.status_code == 201, r.text
    echoes = [{"message": f"hello {n}", "object": {"n": n, "tags": ["sst"] * (n % 3)}}
              for n in range(50)]
    shouts = [{"message": f"sea {n}", "times": n % 4 + 1} for n in range(10)]

    async def every(client: httpx.AsyncClient) -> tuple[list[dict], list[dict]]:
        jobs = await asyncio.gather(*(ran(client, "echo", inputs) for inputs in echoes),
                                    *(ran(client, tool, inputs) for inputs in shouts))
        return list(jobs), await results_of(client, list(jobs))

    jobs, through_slurm = await every(ann)
    slurm_ids = [await batch_job(settings, job["jobID"]) for job in jobs]
    assert None not in slurm_ids and len(set(slurm_ids)) == 60  # a Slurm job each

    assert list(shared.iterdir()) == []  # each job's folder removed once read
    token = issuer.token("ann", client=PROCESS_CLIENT, groups=["ocean"])
    async with service_app(job_queue=f"local-{uuid.uuid4().hex[:8]}", in_process_worker=True,
                           worker_concurrency=4) as local:
        here = local.client(token)
        local_jobs, results = await every(here)
        assert results == through_slurm
        assert {await batch_job(settings, job["jobID"]) for job in local_jobs} == {None}
    assert through_slurm[0] == {"message": "hello 0", "object": {"n": 0, "tags": []}}
    assert through_slurm[51]["shouted"]["contents"] == "SEA 1 SEA 1 \n"


async def test_slurm_gets_the_cpus_memory_account_and_time_asked(
        service, slurm: SlurmCluster) -> None:
    ann = service["ann"]
    cases = [({"limits": {"cpu": "2", "memory": "300Mi"}}, "2", "300M"),
             ({"requests": {"cpu": "1500m"}, "limits": {"memory": "1Gi"}}, "2", "1G"),
             ({}, "1", "256M")]
    for resources, cpus, memory in cases:
        r = await execute(ann, "sleep", {"seconds": 60, **({"resources": resources}
                                                            if resources else {})},
                          metadata={"project": "ocean"})
        assert r.status_code == 201, r.text
        job_id = r.headers["Location"].rsplit("/", 1)[1]
        shown = slurm.job(await slurm_job_of(slurm, job_id))
        assert (shown["NumCPUs"], shown["Account"], shown["TimeLimit"]) == \
            (cpus, "ocean", "1-00:00:00")
        assert f"cpu={cpus},mem={memory}" in shown["TRES"], shown["TRES"]
        assert await message_of(ann, r.headers["Location"], "running") == \
            f"running in Slurm (job {shown['JobId']} on {shown['NodeList']})"
        assert REGISTRY.get_sample_value("geocatalog_slurm_jobs", {"state": "running"}) >= 1
        assert (await ann.delete(r.headers["Location"])).status_code == 200


async def test_dismissing_a_job_cancels_its_slurm_job(service, slurm: SlurmCluster) -> None:
    ann = service["ann"]
    r = await execute(ann, "sleep", {"seconds": 120})
    job_id = r.headers["Location"].rsplit("/", 1)[1]
    slurm_id = await slurm_job_of(slurm, job_id)
    assert slurm.queue()[slurm_id] == "RUNNING"
    r = await ann.delete(r.headers["Location"])
    assert (r.status_code, r.json()["status"]) == (200, "dismissed")
    assert await until(lambda: slurm_id not in slurm.queue(), seconds=60)
    assert in_slurm(slurm, job_id) == [(slurm_id, "CANCELLED")]


async def test_a_request_above_a_ceiling_is_refused_naming_it(service) -> None:
    ann = service["ann"]
    r = await execute(ann, "echo", {"message": "x", "resources": {
        "limits": {"cpu": "4", "memory": "2Gi"}}})
    assert r.status_code == 400
    assert r.json()["detail"] == (
        "processInputs ask for more than a job may have: resources/limits/cpu: at most 2 "
        "cores (JOB_CPU_MAX); resources/limits/memory: at most 1Gi (JOB_MEMORY_MAX)")


def start_worker(settings, shared: Path, slurm: SlurmCluster, queue: str,
                 path: str | None = None) -> subprocess.Popen:
    """A `geocatalog worker` of `queue` on Slurm (`path`: its PATH, where it finds Slurm's
    commands)."""
    env = {**os.environ, **slurm.env, "PATH": path or os.environ["PATH"],
           "DATABASE_URL": settings.database_url,
           **role_env(settings.database_url), "JOB_QUEUE": queue,
           "GEOCATALOG_DATA_DIR": str(settings.data_dir), "OIDC_ISSUER": settings.oidc_issuer,
           "JOB_HEARTBEAT_SECONDS": "0.5", "JOB_STALLED_SECONDS": "3",
           "JOB_EXECUTOR": "slurm", "SLURM_FOLDER": str(shared), "JOB_MEMORY": "256Mi",
           "EXTRA_PROCESSES": "tests.support.processes:TEST_PROCESSES"}
    return subprocess.Popen([sys.executable, "-m", "stac_ext.cli", "worker", "--concurrency",
                             "4"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


@pytest.fixture
async def submitter(service_app, settings, issuer: TestIssuer, shared: Path,
                    slurm: SlurmCluster) -> AsyncIterator[dict]:
    """An API without a worker, and `start()`: a worker process of its queue on Slurm."""
    queue = f"slurm-{uuid.uuid4().hex[:8]}"
    workers: list[subprocess.Popen] = []
    token = issuer.token("ann", client=PROCESS_CLIENT)
    async with service_app(**slurm_settings(shared, job_queue=queue,
                                            in_process_worker=False)) as api:
        yield {"ann": api.client(token), "start": lambda **more: workers.append(
            start_worker(settings, shared, slurm, queue, **more)) or workers[-1]}
    for worker in workers:
        if worker.poll() is None:
            worker.terminate()
            worker.wait(timeout=60)


async def batch_job(settings, job_id: str) -> str | None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(settings.database_url) as conn:
        row = await (await conn.execute("SELECT batch_job FROM processes.jobs WHERE id = %s",
                                        (job_id,))).fetchone()
    return row[0] if row else None


async def test_a_worker_killed_mid_run_reattaches_once_started_again(
        submitter, settings, shared: Path, slurm: SlurmCluster) -> None:
    """Its Slurm jobs run on; the worker started again follows each to its end, its log
    read again from the start, without submitting it again."""
    ann = submitter["ann"]
    first = submitter["start"]()
    urls = [(await execute(ann, "sleep", {"seconds": 6})).headers["Location"]
            for _ in range(3)]
    ids = [url.rsplit("/", 1)[1] for url in urls]

    def in_flight() -> bool:
        """Each job in Slurm, one at least still pending or running: the worker submits
        them at once in no set order, two run on the node's two cores, the third waits."""
        states = [in_slurm(slurm, i) for i in ids]
        return all(states) and any(s[0][1] in ("PENDING", "RUNNING") for s in states)

    assert await until(in_flight, seconds=120)
    submitted = {i: in_slurm(slurm, i)[0][0] for i in ids}
    first.send_signal(signal.SIGKILL)
    first.wait()
    submitter["start"]()
    for url, job_id in zip(urls, ids, strict=True):
        job = await wait_for(ann, url, *ENDED, seconds=180)
        assert job["status"] == "successful", job["message"]
        assert (await ann.get(f"{url}/results")).json() == {"slept": 6}
        assert [s for s, _ in in_slurm(slurm, job_id)] == [submitted[job_id]]
        assert await batch_job(settings, job_id) == submitted[job_id]
        log = (await ann.get(f"{url}/logs")).text
        assert log.count("slept 6.00s of 6s") == 1, log
    assert list(shared.iterdir()) == []


def held_sbatch(folder: Path, submits: bool) -> str:
    """A PATH whose `sbatch` waits until `folder/go` exists, after submitting (`submits`)
    or before failing: a worker killed meanwhile stopped between Slurm and the record."""
    bin_folder = folder / "bin"
    bin_folder.mkdir()
    for command in ("squeue", "scancel"):
        (bin_folder / command).symlink_to(str(shutil.which(command)))
    submit = f'id=$({shutil.which("sbatch")} "$@") || exit 1' if submits else "id="
    wait = f"until [ -e {folder / 'go'} ]; do sleep 0.1; done"
    (bin_folder / "sbatch").write_text(
        f'#!/bin/sh\n{submit}\n{wait}\n[ -n "$id" ] && echo "$id"\n')
    (bin_folder / "sbatch").chmod(0o755)
    return f"{bin_folder}:{os.environ['PATH']}"


@pytest.mark.parametrize("submitted", [True, False], ids=["submitted", "not-submitted"])
async def test_a_worker_killed_before_it_recorded_its_slurm_job(
        submitter, settings, shared: Path, slurm: SlurmCluster, tmp_path: Path,
        submitted: bool) -> None:
    """The worker started again finds the Slurm job by its name and follows it to its end;
    a job never submitted fails, saying its worker died, and leaves no folder."""
    ann = submitter["ann"]
    first = submitter["start"](path=held_sbatch(tmp_path, submitted))
    try:
        url = (await execute(ann, "sleep", {"seconds": 2})).headers["Location"]
        job_id = url.rsplit("/", 1)[1]
        slurm_id = await slurm_job_of(slurm, job_id, None) if submitted else None
        assert await until(lambda: (shared / job_id).exists(), seconds=60)
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert await batch_job(settings, job_id) is None
    finally:
        (tmp_path / "go").touch()
    submitter["start"]()
    job = await wait_for(ann, url, *ENDED, seconds=120)
    if submitted:
        assert (job["status"], job["message"]) == ("successful", "finished")
        assert (await ann.get(f"{url}/results")).json() == {"slept": 2}
        assert [s for s, _ in in_slurm(slurm, job_id)] == [slurm_id]
        assert await batch_job(settings, job_id) == slurm_id
    else:
        assert (job["status"], job["message"]) == (
            "failed", "The worker running this job stopped (crash or kill) before it "
            "finished.")
        assert in_slurm(slurm, job_id) == []
    assert list(shared.iterdir()) == []


async def test_a_job_whose_slurm_job_is_gone_fails_saying_so(
        submitter, settings, slurm: SlurmCluster) -> None:
    import psycopg

    ann = submitter["ann"]
    first = submitter["start"]()
    url = (await execute(ann, "sleep", {"seconds": 120})).headers["Location"]
    job_id = url.rsplit("/", 1)[1]
    slurm_id = await slurm_job_of(slurm, job_id)
    first.send_signal(signal.SIGKILL)
    first.wait()
    slurm.run("scancel", slurm_id)
    # as if Slurm lost it (its state cleared): the record names a job Slurm never had
    async with await psycopg.AsyncConnection.connect(settings.database_url) as conn:
        await conn.execute("UPDATE processes.jobs SET batch_job = '999999' WHERE id = %s",
                           (job_id,))
    submitter["start"]()
    job = await wait_for(ann, url, *ENDED, seconds=120)
    assert (job["status"], job["message"]) == (
        "failed", "The Slurm job 999999 of this job is gone: Slurm no longer knows it, and "
        "it ended without a result.")


async def test_a_deployed_tools_container_runs_in_its_slurm_job(
        service, settings, shared: Path, slurm: SlurmCluster) -> None:
    """On the node, the job's batch step runs its tool's container, as a worker would."""
    dora = service["dora"]
    name = f"contained-{uuid.uuid4().hex[:6]}"
    r = await dora.post("/processes/processes", headers=CWL_YAML, content=shell_in(
        name, cdo_image(), """
        echo input $(cat $1)
        echo user $(id -u):$(id -g)
        echo network $(ls /sys/class/net | tr '\\n' ' ')
        echo cdo $(command -v cdo)
        """))
    assert r.status_code == 201, r.text
    job = await ran(dora, name, {"data": {"contents": "sea surface"}})
    assert list(shared.iterdir()) == []
    assert job["status"] == "successful", job
    report = (await dora.get(f"/processes/jobs/{job['jobID']}/results")).json()["report"]
    assert report["contents"].splitlines() == [
        "input sea surface", "user 65534:65534", "network lo", "cdo /usr/bin/cdo"]
    assert await batch_job(settings, job["jobID"]) is not None
    assert containers_of(job["jobID"]) == []


async def test_a_job_slurm_refuses_fails_with_slurms_reason(
        service_app, issuer: TestIssuer, shared: Path) -> None:
    token = issuer.token("ann", client=PROCESS_CLIENT)
    async with service_app(**slurm_settings(shared, slurm_partition="nowhere")) as service:
        job = await ran(service.client(token), "echo", {"message": "x"})
    assert (job["status"], job["message"]) == (
        "failed", "Slurm refused the job: invalid partition specified: nowhere")



async def test_a_slurm_jobs_process_holds_its_memory_limit(service) -> None:
    """On the node its process holds its memory limit itself."""
    hog = await ran(service["ann"], "test-hog", {
        "mebibytes": 800, "resources": {"limits": {"memory": "300Mi"}}})
    assert (hog["status"], hog["message"]) == (
        "failed", "Memory limit exceeded: the job needed more than 300Mi (its "
        "resources.limits.memory).")


async def test_past_its_wall_time_a_slurm_job_is_cancelled_saying_so(
        service_app, issuer: TestIssuer, shared: Path, slurm: SlurmCluster) -> None:
    token = issuer.token("ann", client=PROCESS_CLIENT)
    async with service_app(**slurm_settings(shared, job_wall_seconds=4)) as service:
        slow = await ran(service.client(token), "sleep", {"seconds": 60})
    assert (slow["status"], slow["message"]) == (
        "failed", "Wall time limit reached: the job ran for 4 s (JOB_WALL_SECONDS) and was "
        "stopped.")
    assert [state for _, state in in_slurm(slurm, slow["jobID"])] == ["CANCELLED"]
    assert list(shared.iterdir()) == []


def three_steps(process_id: str, image: str) -> str:
    """A workflow of three steps in containers, each reading the file of the one before
    and adding its word."""
    return f"""\
cwlVersion: v1.2
$graph:
  - id: {process_id}
    class: Workflow
    inputs:
      word: string
    outputs:
      story: {{type: File, outputSource: third/out}}
    steps:
      first: {{run: "#say", in: {{word: word}}, out: [out]}}
      second: {{run: "#say", in: {{word: {{default: two}}, before: first/out}}, out: [out]}}
      third: {{run: "#say", in: {{word: {{default: three}}, before: second/out}}, out: [out]}}
  - id: say
    class: CommandLineTool
    requirements:
      DockerRequirement: {{dockerImageId: "{image}"}}
    baseCommand: [bash, -c, 'if [ -n "$2" ]; then cat "$2"; fi; echo "$1"', say]
    inputs:
      word: {{type: string, inputBinding: {{position: 1}}}}
      before: {{type: File?, inputBinding: {{position: 2}}}}
    stdout: out.txt
    outputs:
      out: stdout
"""


async def test_a_workflows_steps_run_as_slurm_jobs_of_their_own(
        service, shared: Path, slurm: SlurmCluster) -> None:
    dora = service["dora"]
    name = f"story-{uuid.uuid4().hex[:6]}"
    r = await dora.post("/processes/processes", headers=CWL_YAML,
                        content=three_steps(name, cdo_image()))
    assert r.status_code == 201, r.text
    job = await ran(dora, name, {"word": "one"})
    assert job["status"] == "successful", job
    story = (await dora.get(f"/processes/jobs/{job['jobID']}/results")).json()["story"]
    assert story["contents"] == "one\ntwo\nthree\n"
    steps = in_slurm(slurm, job["jobID"], "geocatalog-step-")
    assert [state for _, state in steps] == ["COMPLETED"] * 3  # each a Slurm job of its own
    # the job's record ends once its process's end is read: its batch step exits just after
    assert await until(lambda: [state for _, state in in_slurm(slurm, job["jobID"])] ==
                       ["COMPLETED"], seconds=60)
    assert list(shared.iterdir()) == []


async def test_dismissing_a_workflow_cancels_its_steps_slurm_jobs(
        service, slurm: SlurmCluster) -> None:
    dora = service["dora"]
    name = f"naps-{uuid.uuid4().hex[:6]}"
    package = three_steps(name, cdo_image()).replace(
        "'if [ -n \"$2\" ]; then cat \"$2\"; fi; echo \"$1\"'", "'sleep 120'")
    r = await dora.post("/processes/processes", headers=CWL_YAML, content=package)
    assert r.status_code == 201, r.text
    r = await execute(dora, name, {"word": "one"})
    job_id = r.headers["Location"].rsplit("/", 1)[1]

    def steps() -> list[str]:
        return [state for _, state in in_slurm(slurm, job_id, "geocatalog-step-")]

    assert await until(lambda: steps() == ["RUNNING"], seconds=120)
    assert (await dora.delete(r.headers["Location"])).status_code == 200
    assert await until(lambda: steps() == ["CANCELLED"], seconds=60), steps()
    assert await until(lambda: [s for _, s in in_slurm(slurm, job_id)] == ["CANCELLED"],
                       seconds=60)
