"""Deployed tools in containers (CWL `DockerRequirement`), on real podman with an image
built offline: the catalog-to-job scenario's CDO mean in a container, with the result of
the Debian binary; what a container cannot reach; its memory limit; its end with its job's
dismissal, and with a dead worker; the images an admin lists and pulls."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import xarray as xr

from process_api.runner.container_run import ContainerJob, run_container
from process_api.runner.containers import LABEL, Mount, Podman, ToolRun
from process_api.runner.mounts import mount_problem
from process_api.runner.own_sandbox import SPARE_PREFIX
from stac_ext.publish.demo_files import sst_monthly
from tests.support.containers import cdo_image, cdo_mean_in, containers_of, shell_in
from tests.support.cwl import cdo_mean
from tests.support.issuer import PROCESS_CLIENT, TestIssuer
from tests.support.jobs import execute, until, wait_for
from tests.support.paths import ROOT
from tests.support.s3 import KEY_ID, SECRET, s3_client

pytestmark = pytest.mark.slow
CWL_YAML = {"Content-Type": "application/cwl+yaml"}


@pytest.fixture
async def service(service_app, issuer: TestIssuer) -> AsyncIterator[dict]:
    """The service with a worker and a data dir of its own (a password file in it); dora
    deploys."""
    data_dir = ROOT / ".artifacts" / f"containers-{uuid.uuid4().hex[:8]}"
    data_dir.mkdir(parents=True)
    (data_dir / "pg.password").write_text("superuser-secret")
    token = issuer.token("dora", client=PROCESS_CLIENT, rights=["deployProcess"])
    async with service_app(geocatalog_data_dir=data_dir, in_process_worker=True,
                           job_queue=f"containers-{uuid.uuid4().hex[:8]}") as started:
        yield {"dora": started.client(token), "data_dir": data_dir}
    subprocess.run(["rm", "-rf", str(data_dir)], check=True)


async def deployed(client: httpx.AsyncClient, package: str) -> None:
    r = await client.post("/processes/processes", content=package, headers=CWL_YAML)
    assert r.status_code == 201, r.text


async def ran(client: httpx.AsyncClient, process: str, inputs: dict) -> tuple[dict, str]:
    """The job's end (its record) and its URL."""
    r = await execute(client, process, inputs)
    assert r.status_code == 201, r.text
    url = r.headers["Location"]
    return await wait_for(client, url, "successful", "failed", "dismissed", seconds=300), url


async def report(client: httpx.AsyncClient, process: str, inputs: dict) -> dict[str, str]:
    """A shell tool's `key value` lines."""
    job, url = await ran(client, process, inputs)
    assert job["status"] == "successful", job["message"]
    text = (await client.get(f"{url}/results")).json()["report"]["contents"]
    return dict(line.split(" ", 1) for line in text.splitlines())


async def test_the_cdo_mean_runs_in_a_container_as_the_debian_binary_does(
        service, s3_endpoint: str) -> None:
    dora = service["dora"]
    bucket = f"sst-{uuid.uuid4().hex[:8]}"
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    for key, data in sst_monthly():
        s3.put_object(Bucket=bucket, Key=key, Body=data)
    inputs = {"files": [{"href": f"s3://{bucket}/sst-2021-0{m}.nc"} for m in (1, 2, 3)],
              "s3": {"accessKeyId": KEY_ID, "secretAccessKey": SECRET,
                     "endpoint": s3_endpoint, "defaultRegion": "us-east-1"}}
    means = {}
    for kind, package in (("container", cdo_mean_in), ("binary", None)):
        name = f"mean-{kind}-{uuid.uuid4().hex[:8]}"
        await deployed(dora, package(name, cdo_image()) if package else cdo_mean(name))
        job, url = await ran(dora, name, inputs)
        assert job["status"] == "successful", job["message"]
        mean = (await dora.get(f"{url}/results")).json()["mean"]
        assert (mean["basename"], mean["type"]) == ("mean.nc", "application/netcdf")
        got = await dora.get(mean["href"])
        assert got.status_code == 200
        means[kind] = xr.open_dataset(io.BytesIO(got.content), engine="h5netcdf").load()
    # the same numbers; CDO's `history` names the time it ran
    assert means["container"].drop_attrs().identical(means["binary"].drop_attrs())
    assert float(means["container"]["sst"].mean()) == float(means["binary"]["sst"].mean())


async def test_a_container_reaches_nothing_of_the_service(service, database_url: str
                                                         ) -> None:
    dora = service["dora"]
    database = urlsplit(database_url)
    name = f"probe-{uuid.uuid4().hex[:8]}"
    data_dir = service["data_dir"]
    await deployed(dora, shell_in(name, cdo_image(), f"""
        try() {{ if ( eval "$2" ) 2>/dev/null; then echo "$1 ok"; else echo "$1 refused"; fi; }}
        try database "exec 3<>/dev/tcp/{database.hostname}/{database.port}"
        try loopback "exec 3<>/dev/tcp/127.0.0.1/22"
        try data-dir "test -e {data_dir}/pg.password"
        try worker-proc "test -e /proc/{os.getpid()}/environ"
        try write-root "echo x > /written"
        try write-etc "echo x > /etc/written"
        try write-input "echo x >> $1"
        try write-output "echo x > written.txt"
        try write-tmp "echo x > /tmp/written.txt"
        try read-input "test -s $1"
        echo user $(id -u):$(id -g)
        echo capabilities $(grep CapEff /proc/self/status | cut -f2)
        echo network $(ls /sys/class/net | tr '\\n' ' ')
        """))
    inputs = {"data": {"contents": "some data"}}
    assert await report(dora, name, inputs) == {
        "database": "refused", "loopback": "refused",  # no network: not even the loopback
        "data-dir": "refused", "worker-proc": "refused",  # nothing of the host's folders
        "write-root": "refused", "write-etc": "refused",  # a read-only root
        "write-input": "refused",  # its inputs read-only
        "write-output": "ok", "write-tmp": "ok",  # its output folder and its /tmp
        "read-input": "ok",
        "user": "65534:65534", "capabilities": "0000000000000000", "network": "lo"}


async def test_each_container_job_takes_a_sandbox_started_ahead_with_its_folders(
        service) -> None:
    """A container job's sandbox is a spare started ahead (`JOB_WARM_SANDBOXES`), with its
    folders on the host made with it: its tool's working folder is in that spare's `/tmp`;
    the next job's in another spare's; each spare's folders are removed with its job."""
    dora = service["dora"]
    name = f"where-{uuid.uuid4().hex[:8]}"
    # the host folder its working folder is bound from (as its filesystem names it)
    await deployed(dora, shell_in(name, cdo_image(),
                                  'echo host $(grep " $(pwd) " /proc/self/mountinfo '
                                  '| cut -d" " -f4)'))
    spare = re.compile(rf"/({SPARE_PREFIX}{os.getpid()}-[^/]+)/tmp/")
    seen = []
    for _ in range(2):
        found = spare.search((await report(dora, name, {}))["host"])
        assert found is not None
        seen.append(Path(tempfile.gettempdir()) / found.group(1))
        assert await until(lambda: not seen[-1].exists())  # gone with its job
    assert seen[0] != seen[1]


async def test_a_tool_past_its_memory_limit_is_stopped_saying_so(service) -> None:
    dora = service["dora"]
    name = f"hungry-{uuid.uuid4().hex[:8]}"
    await deployed(dora, shell_in(name, cdo_image(),
                                  'x=$(head -c 800000000 /dev/zero | tr "\\0" a); echo ${#x}'))
    job, url = await ran(dora, name, {"resources": {"limits": {"memory": "300Mi"}}})
    assert (job["status"], job["message"]) == (
        "failed", "Memory limit exceeded: the job needed more than 300Mi (its "
                  "resources.limits.memory).")
    log = (await dora.get(f"{url}/logs")).text
    assert "The container was stopped: its tool needed more than the job's 300Mi of " \
           "memory (resources.limits.memory)." in log
    assert containers_of(job["jobID"]) == []
    # podman's monitor notes the kill in a file of its working directory: the job's folder
    # (gone with it), never the worker's
    assert not (Path.cwd() / "oom").exists()


async def test_dismissing_a_job_removes_its_container(service) -> None:
    dora = service["dora"]
    name = f"sleeper-{uuid.uuid4().hex[:8]}"
    await deployed(dora, shell_in(name, cdo_image(),
                                  "echo tool says $((6 * 7)) >&2; sleep 300"))
    r = await execute(dora, name, {})
    url = r.headers["Location"]
    job_id = url.rsplit("/", 1)[1]
    assert await until(lambda: containers_of(job_id), seconds=120)
    # what the tool writes is the job's log, as it comes
    deadline = time.monotonic() + 60
    while "tool says 42" not in (log := (await dora.get(f"{url}/logs")).text) and \
            time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert "tool says 42" in log  # (its command line, also in the log, says `$((6 * 7))`)
    assert (await dora.delete(url)).json()["status"] == "dismissed"
    assert await until(lambda: not containers_of(job_id), seconds=60)
    assert containers_of(job_id) == []


def test_a_workers_containers_are_removed_once_it_is_gone() -> None:
    """A worker killed with its containers running: the next worker's start removes them
    (those of a worker alive stay)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    names = {}
    for who, pid in (("gone", dead.pid), ("alive", os.getpid())):
        names[who] = f"geocatalog-test-{who}-{uuid.uuid4().hex[:8]}"
        subprocess.run(["podman", "run", "-d", "--name", names[who], "--label",
                        f"{LABEL}={socket.gethostname()}:{pid}:job", "--network", "none",
                        cdo_image(), "sleep", "300"], check=True, capture_output=True)
    podman = Podman.available()
    assert podman is not None
    try:
        assert names["gone"] in podman.reap()
        listed = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}}"],
                                capture_output=True, text=True, check=True).stdout.split()
        assert names["gone"] not in listed and names["alive"] in listed
    finally:
        subprocess.run(["podman", "rm", "-f", "-t", "0", "--ignore", *names.values()],
                       capture_output=True)


async def test_a_container_that_mounts_another_folder_than_the_one_checked_never_runs(
        tmp_path: Path) -> None:
    """Made (mounts done, nothing run), a container's mount table is read back: a folder
    swapped for another between the check and the mount is seen."""
    checked, other = tmp_path / "checked", tmp_path / "other"
    checked.mkdir()
    other.mkdir()
    podman = Podman.available()
    assert podman is not None
    run = ToolRun(name=f"geocatalog-test-{uuid.uuid4().hex[:8]}", job_id="test",
                  image=cdo_image(), command=["true"], workdir="/out",
                  mounts=[Mount(checked, "/out", writable=True)])
    try:
        pid = await podman.prepare(run)
        assert mount_problem(pid, [(checked, "/out")]) is None
        assert mount_problem(pid, [(other, "/out")]) == (
            "The folder mounted at /out is not the one checked (it changed while its "
            "container was made); the container was not started.")
        assert mount_problem(pid, [(checked, "/elsewhere")]) is not None
    finally:
        await podman.remove(run.name)


async def test_a_tool_is_answered_before_its_container_is_removed(tmp_path: Path) -> None:
    """podman's removal (about 50 ms) runs after the tool's answer, by a task its broker
    waits for before the job's folders go."""
    podman = Podman.available()
    assert podman is not None
    job_id = uuid.uuid4().hex
    run = ToolRun(name=f"geocatalog-test-{job_id[:8]}", job_id=job_id, image=cdo_image(),
                  command=["true"], workdir="/", mounts=[])
    job = ContainerJob(job_id, frozenset({cdo_image()}), memory_bytes=2**30, processes=100)
    stdio = [os.open(os.devnull, os.O_RDWR) for _ in range(3)]
    removals: set[asyncio.Task[None]] = set()
    reply = await run_container(podman, None, job, run, tmp_path, stdio, removals=removals)
    assert reply == {"status": 0, "hit": []}
    assert containers_of(job_id) == [run.name]  # answered; its removal not begun
    await asyncio.gather(*removals)
    assert (containers_of(job_id), removals) == ([], set())


def test_an_admin_lists_images_and_pulls_only_from_allowed_registries() -> None:
    geocatalog = str(Path(os.environ.get("VIRTUAL_ENV", ROOT / ".venv")) / "bin" / "geocatalog")
    listed = subprocess.run([geocatalog, "images", "list", "--json"], capture_output=True,
                            text=True, check=True)
    assert cdo_image() in {n for i in json.loads(listed.stdout) for n in i["names"]}
    pulled = subprocess.run([geocatalog, "images", "pull", "ghcr.io/osgeo/gdal:latest"],
                            capture_output=True, text=True)
    assert (pulled.returncode, pulled.stderr.strip()) == (
        1, "The registry ghcr.io is not allowed (CONTAINER_REGISTRIES: none).")


def test_podman_answers_under_uvloop(tmp_path: Path) -> None:
    """Under uvloop (uvicorn's loop: `geocatalog serve`, `make run`) `podman init` never
    seemed to end: its monitor holds the pipe of its output, the call waited out its 30 s,
    and the kill of the exited process raised ProcessLookupError, which the broker
    swallowed (every container tool failed with status 125, saying nothing)."""
    import uvloop

    podman = Podman.available()
    assert podman is not None
    run = ToolRun(name=f"geocatalog-test-{uuid.uuid4().hex[:8]}", job_id="test",
                  image=cdo_image(), command=["true"], workdir="/", mounts=[])

    async def made() -> int:
        try:
            return await podman.prepare(run, tmp_path)
        finally:
            await podman.remove(run.name)

    assert uvloop.run(made()) > 0


CONTAINER_TOOL = """\
cwlVersion: v1.2
class: CommandLineTool
id: {process}
requirements:
  DockerRequirement: {{dockerPull: "{image}"}}
baseCommand: [ls, /]
inputs: []
outputs:
  listing: stdout
"""


async def test_a_container_that_cannot_run_says_why_in_its_jobs_message(service) -> None:
    """A missing image failed the job as "The CWL run failed (cwltool exit status 1): INFO
    cwltool ... INFO Resolved ...": its cause in the job's log only."""
    dora = service["dora"]
    process, image = f"missing-{uuid.uuid4().hex[:8]}", "localhost/geocatalog-missing:1"
    await deployed(dora, CONTAINER_TOOL.format(process=process, image=image))
    job, _ = await ran(dora, process, {})
    assert (job["status"], job["message"]) == ("failed", (
        f"The image {image} is not on this worker; an admin adds it (`geocatalog images "
        f"pull {image}` from an allowed registry, or `podman load`/`podman import`)."))


async def test_a_worker_without_podman_fails_container_jobs_saying_so(service_app,
                                                                     issuer) -> None:
    token = issuer.token("dora", client=PROCESS_CLIENT, rights=["deployProcess"])
    process = f"unrun-{uuid.uuid4().hex[:8]}"
    async with service_app(job_queue=f"no-podman-{uuid.uuid4().hex[:8]}",
                           in_process_worker=True, job_containers="none") as service:
        dora = service.client(token)
        await deployed(dora, CONTAINER_TOOL.format(process=process, image=cdo_image()))
        job, _ = await ran(dora, process, {})
    assert (job["status"], job["message"]) == ("failed", (
        "This worker runs no containers (podman is not installed, or JOB_CONTAINERS is "
        "none): the process's tools need one."))
