"""Every file of the service's results store belongs to something that removes it: its
job's record (dismissal removes it), then the items published from it; what nothing owns
(a worker killed between storing and recording, a published item deleted after its job was
dismissed) is found and removed by `geocatalog results gc`. A job stores at most
JOB_RESULT_FILES files, an output holding a NUL fails the job in words, and an output that
is a link is not followed."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from stac_ext.publish.demo_files import netcdf_bytes
from tests.support.cli import run_cli
from tests.support.cwl import python_tool
from tests.support.issuer import PROCESS_CLIENT, TestIssuer
from tests.support.jobs import execute, wait_for
from tests.support.roles import role_env
from tests.support.s3 import KEY_ID, SECRET, s3_client

pytestmark = pytest.mark.slow

CWL_YAML = {"Content-Type": "application/cwl+yaml"}
SST = "climate_forecast-sea_surface_temperature"


@pytest.fixture(scope="module")
async def service(service_app, issuer: TestIssuer, tmp_path_factory: pytest.TempPathFactory
                  ) -> AsyncIterator[dict]:
    """The service with a worker and a results store of its own (at most 20 files a job);
    alice's process and data clients, bob's process client, an anonymous one, its data
    dir."""
    data_dir = tmp_path_factory.mktemp("results-store")
    async with service_app(geocatalog_data_dir=data_dir, in_process_worker=True,
                           job_queue=f"results-{uuid.uuid4().hex[:8]}",
                           job_result_files=20) as started:
        yield {"alice": started.client(issuer.token("alice", client=PROCESS_CLIENT,
                                                    rights=["deployProcess"])),
               "alice_data": started.client(issuer.token("alice")), "data_dir": data_dir,
               "bob": started.client(issuer.token("bob", client=PROCESS_CLIENT,
                                                  rights=["deployProcess"])),
               "anonymous": started.client(),
               "store": data_dir / "results"}


async def deployed(alice: httpx.AsyncClient, script: str, inputs: dict[str, str],
                   outputs: dict[str, str]) -> str:
    process = f"writer-{uuid.uuid4().hex[:8]}"
    r = await alice.post("/processes/processes", headers=CWL_YAML,
                         content=python_tool(process, script, inputs, outputs))
    assert r.status_code == 201, r.text
    return process


async def ended(alice: httpx.AsyncClient, process: str, inputs: dict) -> tuple[str, dict]:
    r = await execute(alice, process, inputs)
    assert r.status_code == 201, r.text
    url = r.headers["Location"]
    return url, await wait_for(alice, url, "successful", "failed", seconds=180)


def stored(store: Path, job_url: str) -> list[str]:
    job_id = job_url.rsplit("/", 1)[1]
    return sorted(str(p.relative_to(store)) for p in (store / job_id).rglob("*") if p.is_file())


async def test_an_output_holding_a_nul_fails_in_words_and_its_files_stay_its_own(
        service) -> None:
    """It failed as "The service could not run this job (UntranslatableCharacter)", and its
    stored file then belonged to nothing: readable by nobody, surviving dismissal."""
    alice = service["alice"]
    process = await deployed(alice, "for name in ('x.bin', 'y.txt'):\n"
                                    "    open(name, 'w').write('a\\0b')", {}, {
        "data": "{type: File, outputBinding: {glob: x.bin}}",
        "text": "{type: string, outputBinding: {glob: y.txt, loadContents: true, "
                "outputEval: '$(self[0].contents)'}}"})
    url, job = await ended(alice, process, {})
    assert (job["status"], job["message"]) == (
        "failed", "Output text holds a NUL character, which a job's record cannot keep.")
    job_id = url.rsplit("/", 1)[1]
    assert stored(service["store"], url) == [f"{job_id}/data/x.bin"]
    r = await alice.get(f"{url}/files/data/x.bin")
    assert (r.status_code, r.content) == (200, b"a\0b")
    assert (await alice.delete(url)).status_code == 200
    assert stored(service["store"], url) == []
    assert not (service["store"] / job_id).exists()  # nor its folders


async def test_a_job_stores_at_most_job_result_files(service) -> None:
    """A job could store 20,000 result files."""
    alice = service["alice"]
    process = await deployed(
        alice, "for n in range(30):\n    open(f'{n}.dat', 'w').write(str(n))", {},
        {"parts": "{type: 'File[]', outputBinding: {glob: '*.dat'}}"})
    url, job = await ended(alice, process, {})
    assert (job["status"], job["message"]) == (
        "failed", "The job wrote more than 20 result files (JOB_RESULT_FILES).")
    assert stored(service["store"], url) == []


async def test_an_output_that_is_a_link_is_not_followed(service) -> None:
    """An output linking to /etc/passwd in the sandbox was copied into the results."""
    alice = service["alice"]
    process = await deployed(alice, "import os\nos.symlink('/etc/passwd', 'out.txt')", {},
                             {"out": "{type: File, outputBinding: {glob: out.txt}}"})
    url, job = await ended(alice, process, {})
    assert (job["status"], job["message"]) == (
        "failed", "Output out: out.txt is a link, which a job's results may not be.")
    assert stored(service["store"], url) == []


async def test_a_jobs_file_is_a_later_jobs_input_for_who_reads_it(service) -> None:
    """The worker fetched a file of the service's store over HTTP, as no one: "does not
    exist" (the files route's 404), even to the job's owner. It reads the store itself once
    the submission found the file the caller's to read; another's is refused at once."""
    alice, bob = service["alice"], service["bob"]
    writer = await deployed(alice, "open('out.txt', 'w').write('made by the first job')",
                            {}, {"out": "{type: File, outputBinding: {glob: out.txt}}"})
    url, job = await ended(alice, writer, {})
    assert job["status"] == "successful", job.get("message")
    href = (await alice.get(f"{url}/results")).json()["out"]["href"]
    assert href == f"{url}/files/out/out.txt"
    reading = ("import sys\nopen('said.txt', 'w').write(open(sys.argv[1]).read().upper())",
               {"data": "File"}, {"said": "{type: string, outputBinding: {glob: said.txt, "
                                          "loadContents: true, outputEval: "
                                          "'$(self[0].contents)'}}"})

    reader = await deployed(alice, *reading)
    url, job = await ended(alice, reader, {"data": {"href": href}})
    assert job["status"] == "successful", job.get("message")
    assert (await alice.get(f"{url}/results")).json() == {"said": "MADE BY THE FIRST JOB"}

    theirs = await deployed(bob, *reading)
    r = await execute(bob, theirs, {"data": {"href": href}})
    assert (r.status_code, r.json()["detail"]) == (
        404, f"processInputs.data: {href} does not exist, or is not yours to read.")
    r = await execute(alice, reader, {"data": {"href": f"{href}.missing"}})
    assert (r.status_code, r.json()["detail"]) == (
        404, f"processInputs.data: {href}.missing does not exist, or is not yours to read.")

    # read directly: bob's a 404; without a token, missing or not, a 401 asking for one
    path = href.removeprefix("http://testserver")
    assert (await bob.get(path)).status_code == 404
    for asked in (path, f"{path}.missing"):
        r = await service["anonymous"].get(asked)
        assert (r.status_code, r.headers["www-authenticate"], r.json()["detail"]) == (
            401, "Bearer", "Authentication required: no token.")


def gc(service: dict, settings, *options: str) -> list[str]:
    url = settings.database_url
    out = run_cli("results", "gc", *options, env={
        "DATABASE_URL": url, **role_env(url), "GEOCATALOG_DATA_DIR": str(service["data_dir"])})
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


async def test_results_gc_removes_what_nothing_owns(service, settings, s3_endpoint,
                                                   published_collections) -> None:
    alice, alice_data, store = service["alice"], service["alice_data"], service["store"]
    run = uuid.uuid4().hex[:8]
    bucket = f"gc-{run}"
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="sst.nc", Body=netcdf_bytes())
    copier = await deployed(alice, "import shutil, sys\nshutil.copy(sys.argv[1], 'sst.nc')",
                            {"data": "File"}, {"mean": "{type: File, outputBinding: "
                                                       "{glob: sst.nc}}"})
    keys = {"accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": s3_endpoint,
            "defaultRegion": "us-east-1"}
    # a job whose file is published, then dismissed: the item keeps the file
    published_url, job = await ended(alice, copier, {
        "data": {"href": f"s3://{bucket}/sst.nc"}, "s3": keys,
        "publish": {"visibility": "private"}})
    assert job["status"] == "successful", job
    item = (await alice.get(f"{published_url}/results")).json()["mean"]["items"][0]
    assert (await alice.delete(published_url)).status_code == 200
    # a job whose file is its own
    kept_url, job = await ended(alice, copier, {"data": {"href": f"s3://{bucket}/sst.nc"},
                                                 "s3": keys})
    assert job["status"] == "successful", job
    # what a killed worker left: a file its job's record does not name, a job gone
    kept_id = kept_url.rsplit("/", 1)[1]
    planted = [f"{kept_id}/mean/0/left.nc", f"{uuid.uuid4()}/mean/sst.nc", "not-a-job/x"]
    for key in planted:
        (store / key).parent.mkdir(parents=True, exist_ok=True)
        (store / key).write_bytes(b"left behind")
    published = stored(store, published_url)
    kept = [k for k in stored(store, kept_url) if k not in planted]

    lines = gc(service, settings, "--dry-run")
    assert sorted(lines[:-1]) == sorted(f"would remove {key}" for key in planted)
    assert (store / planted[0]).exists()
    lines = gc(service, settings)
    assert sorted(lines[:-1]) == sorted(f"removed {key}" for key in planted)
    assert not any((store / key).exists() for key in planted)
    # nor the folders they left empty (they stayed), but the kept job's, which holds more
    assert not (store / planted[1].split("/")[0]).exists()
    assert not (store / "not-a-job").exists() and (store / kept_id / "mean").is_dir()
    assert stored(store, published_url) == published and stored(store, kept_url) == kept

    # the published item deleted: its file is nobody's now
    r = await alice_data.delete(item.removeprefix("http://testserver"))
    assert r.status_code == 204, r.text
    assert gc(service, settings)[:-1] == [f"removed {key}" for key in published]
    assert stored(store, published_url) == [] and stored(store, kept_url) == kept


async def test_a_jobs_files_are_served_as_data_never_run(service) -> None:
    """A job's x.js was served from /processes/jobs/.../files as text/javascript, without
    nosniff: this origin would run a user's script."""
    alice = service["alice"]
    names = {"page": "x.html", "script": "x.js", "drawing": "x.svg", "table": "x.csv"}
    process = await deployed(
        alice, "for name in ('x.html', 'x.js', 'x.svg', 'x.csv'):\n"
               "    open(name, 'w').write('<script>alert(1)</script>')", {},
        {output: f"{{type: File, outputBinding: {{glob: {name}}}}}"
         for output, name in names.items()})
    url, job = await ended(alice, process, {})
    assert job["status"] == "successful", job
    served = {}
    for output, name in names.items():
        r = await alice.get(f"{url}/files/{output}/{name}")
        assert r.status_code == 200
        served[name] = {k: r.headers[k] for k in (
            "content-type", "content-disposition", "x-content-type-options",
            "content-security-policy")}
    data = "application/octet-stream"
    assert served == {name: {
        "content-type": data if name != "x.csv" else "text/csv; charset=utf-8",
        "content-disposition": f'attachment; filename="{name}"',
        "x-content-type-options": "nosniff",
        "content-security-policy": "sandbox; default-src 'none'"} for name in names.values()}
