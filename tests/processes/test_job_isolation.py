"""Nothing of the service reaches a job: seen from inside a deployed tool run by
`geocatalog serve` (uvicorn's worker manager, its in-process job worker), the tool holds no
descriptor of the service (the API's listening socket above all), takes none from another
process with `pidfd_getfd`, and reads no environment but the jobs' allow-list."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from process_api.runner.isolation import JOB_ENVIRONMENT
from tests.support.cli import COMMAND
from tests.support.cwl import inspector
from tests.support.http import free_port, wait_until_ok
from tests.support.issuer import PROCESS_CLIENT
from tests.support.roles import role_env

pytestmark = pytest.mark.slow

#: What the service's environment holds and no job may read.
CANARIES = {"AWS_SECRET_ACCESS_KEY": "canary-aws-secret",
            "DATABASE_READER_URL_CANARY": "postgresql://reader:canary@nowhere/db"}


@pytest.fixture
def served(settings, tmp_path: Path) -> Iterator[str]:
    """`geocatalog serve` on the session database, with a worker and secrets of its own."""
    port = free_port()
    server = subprocess.Popen([*COMMAND, "serve", "--port", str(port)], env={
        **os.environ, "DATABASE_URL": settings.database_url, **role_env(settings.database_url),
        "OIDC_ISSUER": settings.oidc_issuer, "GEOCATALOG_DATA_DIR": str(tmp_path),
        "LOAD_DEMO_DATA": "false", "IN_PROCESS_WORKER": "true",
        "JOB_QUEUE": f"isolation-{uuid.uuid4().hex[:8]}", **CANARIES},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        assert wait_until_ok(f"{base}/healthz").status_code == 200
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)


def test_a_deployed_tool_finds_nothing_of_the_service(served: str, issuer) -> None:
    token = issuer.token("dora", client=PROCESS_CLIENT, rights=["deployProcess"])
    name = f"inspect-{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=f"{served}/processes",
                      headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        r = http.post("/processes", content=inspector(name),
                      headers={"Content-Type": "application/cwl+yaml"})
        assert r.status_code == 201, r.text
        r = http.post(f"/processes/{name}/execution", json={"processInputs": {}},
                      headers={"Prefer": "wait=60"})
        assert r.status_code == 200, r.text
        report = json.loads(r.json()["report"]["contents"])
    # its own descriptors: what cwltool gave it (its stdin, its stdout file, its stderr)
    assert report["fds"] and not [t for t in report["fds"] if t.startswith("socket:")]
    others = report["pids"]
    # the fork server and the job's process it forked are not dumpable: neither their
    # descriptors nor their environment can be taken
    servers = [seen for seen in others.values()
               if seen["cmdline"].split()[1:3] == ["-m", "process_api.runner.forkserver"]]
    assert [(seen["fds"], seen["environ"]) for seen in servers] == \
        [(["EPERM"], "PermissionError")] * 2, others
    # what can be taken (the sandbox's init, the job's own programs) holds no socket
    taken = [target for seen in others.values() if isinstance(seen["fds"], dict)
             for target in seen["fds"].values()]
    assert taken and not [t for t in taken if t.startswith("socket:")], others
    names = {name for seen in others.values() if isinstance(seen["environ"], list)
             for name in seen["environ"]}
    # the sandbox adds where its Python finds the service's code (`sandbox.VIEW`)
    assert names and names <= {*JOB_ENVIRONMENT, "HOME", "PWD", "TMPDIR", "PYTHONPATH"}, names
