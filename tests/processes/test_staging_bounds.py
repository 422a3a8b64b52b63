"""Staging that cannot fill a disk or hold a worker, on the product as run (`geocatalog
serve` and a `geocatalog worker`), against sources on loopback that lie and trickle: the
bytes are counted as they arrive, whatever a server said; staging counts against the job's
wall time, a stalled source fails the job naming it, dismissal stops it at once; a killed
worker's job folders are removed by the next worker."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.cwl import python_tool
from tests.support.issuer import PROCESS_CLIENT, TestIssuer
from tests.support.jobs import job_ended
from tests.support.lying_sources import FLOOD_BYTES, LyingSources, lying_sources
from tests.support.product import Product, running

pytestmark = pytest.mark.slow

CWL_YAML = {"Content-Type": "application/cwl+yaml"}
#: What a stopped download may have let through: its last chunk and the sockets' buffers.
SLACK = 16 * 2**20


@pytest.fixture(scope="module")
def product(settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Product]:
    data_dir = tmp_path_factory.mktemp("staging")
    (data_dir / "tmp").mkdir()
    with running(settings, data_dir, workers=1, JOB_STAGE_BYTES="1Mi", JOB_WALL_SECONDS="12",
                 JOB_STAGE_STALL_SECONDS="3", JOB_USER_RUNNING="1",
                 TMPDIR=str(data_dir / "tmp")) as made:
        yield made


@pytest.fixture(scope="module")
def sources() -> Iterator[LyingSources]:
    with lying_sources() as made:
        yield made


@pytest.fixture(scope="module")
def alice(product: Product, issuer: TestIssuer) -> Iterator[tuple[httpx.Client, str]]:
    """alice's process client, and a process of hers that reads one file (its size)."""
    token = issuer.token("alice", client=PROCESS_CLIENT, rights=["deployProcess"], ttl=3600)
    process = f"size-of-{uuid.uuid4().hex[:8]}"
    with product.client(token) as client:
        r = client.post("/processes/processes", headers=CWL_YAML, content=python_tool(
            process, "import os, sys\nprint(os.path.getsize(sys.argv[1]))",
            {"data": "File"}, {"size": "stdout"}))
        assert r.status_code == 201, r.text
        yield client, process


def submit(alice: tuple[httpx.Client, str], href: str, **more: object) -> str:
    client, process = alice
    r = client.post(f"/processes/processes/{process}/execution",
                    json={"processInputs": {"data": {"href": href}, **more}})
    assert r.status_code == 201, r.text
    return r.headers["Location"]


def job_folders(product: Product) -> list[Path]:
    return sorted((product.data_dir / "tmp").glob("geocatalog-job-data-*"))


def gone(check, seconds: float = 30) -> bool:  # type: ignore[no-untyped-def]
    """Poll until `check()` is falsy (bounded; not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while check() and time.monotonic() < deadline:
        time.sleep(0.2)
    return not check()


@pytest.mark.parametrize("path", ["/unannounced/a.nc", "/understated/b.nc", "/lying/c.nc"])
def test_a_source_that_sends_more_than_it_said_is_cut_at_the_limit(
        product: Product, sources: LyingSources, alice, path: str) -> None:
    """A body without Content-Length, one longer than its HEAD said, and an S3 object
    whose HeadObject says 10 bytes and whose GetObject sends more: each is counted as it
    arrives and stopped at JOB_STAGE_BYTES (they wrote 150-201 MB before the check)."""
    client, _ = alice
    if path.startswith("/lying/"):
        href = f"s3://{path.removeprefix('/')}"
        url = submit(alice, href, s3={"endpoint": sources.base, "defaultRegion": "us-east-1"})
    else:
        href = sources.url(path)
        url = submit(alice, href)
    job = job_ended(client, url)
    assert (job["status"], job["message"]) == (
        "failed", f"Stage-in stopped: the job's inputs are more than 1Mi (JOB_STAGE_BYTES), "
                  f"at {href}.")
    sent = sum(s.bytes for s in sources.sent_to(path))
    assert 2**20 < sent < SLACK < FLOOD_BYTES, sent
    assert gone(lambda: job_folders(product)), job_folders(product)


def test_staging_counts_against_the_wall_time(product: Product, sources: LyingSources,
                                              alice) -> None:
    """A source that trickles a byte a second kept a job staging past its wall time, and
    the job then succeeded."""
    client, _ = alice
    href = sources.url("/trickle/slow.nc")
    job = job_ended(client, submit(alice, href))
    assert (job["status"], job["message"]) == (
        "failed", "Wall time limit reached: the job ran for 12 s (JOB_WALL_SECONDS) and was "
                  f"stopped while its inputs were staged in (at {href}).")
    assert gone(lambda: job_folders(product)), job_folders(product)


def test_a_stalled_source_fails_the_job_naming_it(product: Product, sources: LyingSources,
                                                  alice) -> None:
    client, _ = alice
    href = sources.url("/stall/quiet.nc")
    job = job_ended(client, submit(alice, href))
    assert (job["status"], job["message"]) == (
        "failed", f"Stage-in stopped: {href} sent nothing for 3 s "
                  "(JOB_STAGE_STALL_SECONDS).")


def test_a_web_page_is_not_data(product: Product, sources: LyingSources, alice) -> None:
    """An address copied from a browser's bar gave the job a web page to read."""
    client, _ = alice
    href = sources.url("/page/sst-2022-01.nc")
    job = job_ended(client, submit(alice, href))
    assert (job["status"], job["message"]) == (
        "failed", f"{href} is a web page (HTML), not data: give the data file's own URL, or "
                  "the address of its item in this catalog.")


def test_dismissal_stops_the_staging_at_once(product: Product, sources: LyingSources,
                                             alice) -> None:
    """After a DELETE during staging the worker kept downloading, and the user's next job
    (one running at a time) waited for the download's end."""
    client, _ = alice
    path = "/trickle/dismissed.nc"
    url = submit(alice, sources.url(path))
    assert job_ended(client, url, "running")["status"] == "running"
    time.sleep(1)
    assert client.delete(url).status_code == 200
    _, process = alice
    r = client.post(f"/processes/processes/{process}/execution",
                    json={"processInputs": {"data": {"contents": "four"}}})
    assert r.status_code == 201, r.text
    after = job_ended(client, r.headers["Location"], seconds=60)
    assert after["status"] == "successful", after
    # the trickling download ended long before its 1000 bytes' 1000 seconds (its server
    # sees the connection closed at its next byte, a second apart)
    assert len(sources.sent_to(path)) == 1
    assert gone(lambda: [s for s in sources.sent_to(path) if s.ended is None])
    assert gone(lambda: job_folders(product)), job_folders(product)


def test_a_killed_workers_job_folders_go_with_the_next_worker(
        product: Product, sources: LyingSources, alice) -> None:
    """The folders of a worker killed during staging stayed on its host for ever."""
    client, _ = alice
    url = submit(alice, sources.url("/trickle/killed.nc"))
    assert job_ended(client, url, "running")["status"] == "running"
    worker = product.workers[-1]
    mine = f"geocatalog-job-data-{worker.pid}-"
    assert gone(lambda: not [f for f in job_folders(product) if f.name.startswith(mine)])
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()
    product.start_worker()
    assert gone(lambda: [f for f in job_folders(product) if f.name.startswith(mine)]), \
        job_folders(product)
    assert job_ended(client, url)["status"] == "failed"


@pytest.mark.parametrize(("status", "message"), [
    (403, "The server of {href} refused access (HTTP 403): a job reads a URL as anyone "
          "would, without credentials."),
    (401, "The server of {href} refused access (HTTP 401): a job reads a URL as anyone "
          "would, without credentials."),
    (404, "{href} does not exist."),
    (500, "{href} could not be read: its server answered HTTP 500."),
])
def test_a_source_that_answers_an_error_fails_the_job_saying_which(
        product: Product, sources: LyingSources, alice, status: int, message: str) -> None:
    """fsspec says "not found" for any failed answer: a 403 read as a missing file."""
    client, _ = alice
    href = sources.url(f"/status/{status}/sst.nc")
    job = job_ended(client, submit(alice, href))
    assert (job["status"], job["message"]) == ("failed", message.format(href=href))


@pytest.mark.parametrize("key", ["href", "collection"])
def test_a_url_with_a_password_is_refused_at_submission(
        product: Product, sources: LyingSources, alice, key: str) -> None:
    """It was sent (as Basic auth) and shown in the job's message, its log line and its
    provenance: a 400 that does not repeat it, no job, and nothing asked of the source."""
    client, process = alice
    before = [j["jobID"] for j in client.get("/processes/jobs",
                                              params={"limit": 1000}).json()["jobs"]]
    href = sources.url("/status/403/secret.nc").replace("://", "://user:s3cret@")
    r = client.post(f"/processes/processes/{process}/execution",
                    json={"processInputs": {"data": {key: href}}})
    assert (r.status_code, r.json()["detail"]) == (400, (
        "processInputs.data: the URL holds a user name or password, which the service never "
        "sends nor keeps in a job's record: give a URL that needs none (S3 keys go in the "
        "request's `s3` section).")), r.text
    assert "s3cret" not in r.text
    assert [j["jobID"] for j in client.get("/processes/jobs", params={"limit": 1000})
            .json()["jobs"]] == before
    assert sources.sent_to("/status/403/secret.nc") == []
