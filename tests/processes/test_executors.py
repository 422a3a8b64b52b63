"""The executor contract (`process_api.runner.executor`), the same for every executor: a
sandbox of the job's own (`local`), the same with its tool in a container (`container`)
and Slurm's nodes (`slurm`), each under a real `geocatalog worker` beside `geocatalog
serve`: a run ends with its result; a dismissal ends the run, and frees its owner's turn;
a worker killed (`kill -9`) mid-run leaves a local run to die with it (the job fails,
saying so) and a scheduler's to go on, reattached to by the next worker, its result
recorded once."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from stac_ext.settings import Settings
from tests.support.containers import cdo_image, containers_of
from tests.support.issuer import PROCESS_CLIENT, TestIssuer
from tests.support.jobs import job_ended
from tests.support.paths import ROOT
from tests.support.product import Product, running
from tests.support.slurm import SlurmCluster

pytestmark = pytest.mark.slow

NAP = """\
cwlVersion: v1.2
class: CommandLineTool
id: {process}
requirements:
{requirements}
baseCommand: [sh, -c, 'sleep "$0"; echo done']
inputs:
  seconds: {{type: int, inputBinding: {{position: 1}}}}
outputs:
  said: stdout
"""


@dataclass
class Shape:
    name: str
    product: Product
    client: httpx.Client
    process: str
    slurm: SlurmCluster | None = None


@pytest.fixture(scope="module", params=["local", "container", "slurm"])
def shape(request: pytest.FixtureRequest, settings: Settings, issuer: TestIssuer,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shape]:
    name = request.param
    env = {"JOB_USER_RUNNING": "1", "JOB_MEMORY": "256Mi"}
    slurm = None
    if name == "slurm":
        slurm = request.getfixturevalue("slurm_cluster")
        shared = ROOT / ".artifacts" / f"executors-{uuid.uuid4().hex[:8]}"
        shared.mkdir(parents=True)
        env |= {**slurm.env, "JOB_EXECUTOR": "slurm", "SLURM_FOLDER": str(shared)}
    requirements = (f'  DockerRequirement: {{dockerImageId: "{cdo_image()}"}}'
                    if name == "container" else "  {}")
    process = f"nap-{name}-{uuid.uuid4().hex[:6]}"
    token = issuer.token(f"napper-{name}", client=PROCESS_CLIENT, rights=["deployProcess"],
                         ttl=3600)
    with running(settings, tmp_path_factory.mktemp(f"executor-{name}"), workers=1,
                 **env) as product, product.client(token) as client:
        r = client.post("/processes/processes", headers={
            "Content-Type": "application/cwl+yaml"}, timeout=120, content=NAP.format(
                process=process, requirements=requirements).replace(
                "requirements:\n  {}\n", ""))
        assert r.status_code == 201, r.text
        yield Shape(name, product, client, process, slurm)


def submit(shape: Shape, seconds: int) -> str:
    r = shape.client.post(f"/processes/processes/{shape.process}/execution",
                          json={"processInputs": {"seconds": seconds}})
    assert r.status_code == 201, r.text
    return r.headers["Location"]


def until(check, seconds: float = 60) -> bool:  # type: ignore[no-untyped-def]
    """Poll until `check()` holds (bounded; not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.2)
    return bool(check())


def slurm_jobs(shape: Shape, job_id: str) -> list[str]:
    """The job's Slurm jobs not ended, as squeue shows them."""
    assert shape.slurm is not None
    lines = shape.slurm.run("squeue", "-h", "--states=PENDING,RUNNING,COMPLETING",
                            f"--name=geocatalog-{job_id}", "--format=%i")
    return lines.split()


def test_a_run_ends_with_its_result(shape: Shape) -> None:
    url = submit(shape, 0)
    job = job_ended(shape.client, url)
    assert (job["status"], job["message"]) == ("successful", "finished"), job
    said = shape.client.get(f"{url}/results").json()["said"]
    assert said["contents"] == "done\n"


def test_a_dismissal_ends_the_run(shape: Shape) -> None:
    url = submit(shape, 300)
    assert job_ended(shape.client, url, "running")["status"] == "running"
    job_id = url.rsplit("/", 1)[1]
    if shape.name == "container":
        assert until(lambda: containers_of(job_id) != [])
    if shape.name == "slurm":
        assert until(lambda: slurm_jobs(shape, job_id) != [])
    assert shape.client.delete(url).status_code == 200
    # the run is gone: its owner's one turn is free for the next job
    after = job_ended(shape.client, submit(shape, 0))
    assert after["status"] == "successful", after
    if shape.name == "container":
        assert until(lambda: containers_of(job_id) == [])
    if shape.name == "slurm":
        assert until(lambda: slurm_jobs(shape, job_id) == [])


def test_a_killed_worker_leaves_a_local_run_to_die_and_a_schedulers_to_go_on(
        shape: Shape) -> None:
    url = submit(shape, 8)
    assert job_ended(shape.client, url, "running")["status"] == "running"
    worker = shape.product.workers[-1]
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()
    shape.product.start_worker()
    job = job_ended(shape.client, url, seconds=180)
    if shape.name == "slurm":  # reattached to: its result recorded once
        assert (job["status"], job["message"]) == ("successful", "finished"), job
        assert shape.client.get(f"{url}/results").json()["said"]["contents"] == "done\n"
    else:  # a deployed process's job is not run again
        assert (job["status"], job["message"]) == (
            "failed", "The worker running this job stopped (crash or kill) before it "
                      "finished."), job
