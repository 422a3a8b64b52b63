"""Every job runs in the sandbox (bubblewrap): it cannot read the data dir (the database's
password files, the keys), the worker's /proc (its environment holds the service's
secrets) or any file outside the system and the processes' code; it writes only in a
folder of its own; without a declared need it has no network, so no database either."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from process_api.runner.sandbox import VIEW
from tests.support.issuer import PROCESS_CLIENT
from tests.support.jobs import execute, wait_for
from tests.support.paths import ROOT

#: a module of the service, as a path within the checkout
CHILD = Path("process_api", "runner", "child.py")


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A data dir inside the checkout (visible to the sandbox but for its hiding), with a
    password file as the embedded cluster keeps them."""
    folder = ROOT / ".artifacts" / f"sandbox-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    (folder / "pg.password").write_text("superuser-secret")
    (folder / "pg.password").chmod(0o600)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_a_job_sees_neither_the_services_files_nor_its_secrets(
        service_app, issuer, data_dir: Path, database_url: str) -> None:
    database = urlsplit(database_url)
    cluster_files = sorted(str(p) for p in Path("/tmp").glob("geocatalog-test-*/pg.password"))
    async with service_app(geocatalog_data_dir=data_dir, in_process_worker=True,
                           job_queue=f"sandbox-{uuid.uuid4().hex[:8]}") as service:
        c = service.client(issuer.token("alice", client=PROCESS_CLIENT))
        probes = {
            "read": [str(data_dir / "pg.password"), *cluster_files, "/etc/shadow",
                     str(ROOT / "pyproject.toml"), str(ROOT / CHILD), str(VIEW / "code" / CHILD)],
            "pids": [os.getpid(), 1],
            "connect": [[database.hostname, database.port]],
            "write": [str(ROOT / "written-by-a-job.txt"), "/tmp/anywhere.txt",
                      "/written-by-a-job.txt", "/dev/written-by-a-job.txt"],
        }
        closed = await run(c, "test-probe", probes)
        opened = await run(c, "test-probe-network", probes)
    if not os.environ.get("GEOCATALOG_TEST_DATABASE_URL"):  # the tests' own cluster
        assert cluster_files  # its password file, outside the sandbox
    for seen in (closed, opened):
        assert seen["read"] == {
            str(data_dir / "pg.password"): "FileNotFoundError",  # hidden: an empty folder
            **{f: "FileNotFoundError" for f in cluster_files},  # /tmp is the job's own
            "/etc/shadow": "PermissionError",
            # the service's packages are readable (code, as on any host), where the
            # sandbox shows them; not the checkout around them, nor any host path
            str(ROOT / "pyproject.toml"): "FileNotFoundError",
            str(ROOT / CHILD): "FileNotFoundError",
            str(VIEW / "code" / CHILD): "ok"}
        # the worker's /proc is not there: pid 1 is the sandbox's own init
        assert seen["pids"] == {str(os.getpid()): "FileNotFoundError", "1": "ok"}
        # only /tmp is writable (a tmpfs of JOB_TMP_SIZE): not the system, not the root
        # and /dev the sandbox made (tmpfs of no size)
        # (the checkout's folder does not exist inside: no host path shows)
        assert seen["write"] == {str(ROOT / "written-by-a-job.txt"): "FileNotFoundError",
                                 "/tmp/anywhere.txt": "ok", "/written-by-a-job.txt": "OSError",
                                 "/dev/written-by-a-job.txt": "OSError"}
        assert seen["cwd"].startswith("/tmp/job-") and seen["writable_cwd"] == "ok"
    assert not (ROOT / "written-by-a-job.txt").exists()
    address = f"{database.hostname}:{database.port}"
    assert closed["connect"] == {address: "ConnectionRefusedError"}  # no network at all
    assert opened["connect"] == {address: "ok"}  # declared: network (no password)


async def run(client: httpx.AsyncClient, process: str, inputs: dict) -> dict:
    r = await execute(client, process, inputs)
    assert r.status_code == 201, r.text
    job = await wait_for(client, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job
    return (await client.get(f"{r.headers['Location']}/results")).json()
