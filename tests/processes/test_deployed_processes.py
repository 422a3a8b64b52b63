"""OGC API Processes Part 2 on the real engine: CWL packages deployed, run (async and sync),
watched, dismissed, replaced and undeployed through the API; each of their jobs in a
sandbox of its own."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import httpx
import owslib.ogcapi
import psycopg
import pytest
from owslib.ogcapi.processes import Processes

from process_api.api.errors import OGC, OGC2
from process_api.deployment.cwl import PackageError
from process_api.deployment.package_check import checked
from process_api.runner.isolation import job_environment
from process_api.runner.sandbox import Sandbox
from tests.service.test_metrics import scrape, value
from tests.support.cwl import (
    TWO_STEPS,
    application_package,
    many_steps,
    prober,
    python_tool,
    scripted,
    secretive,
    shout_tool,
)
from tests.support.http import http_client
from tests.support.issuer import PROCESS_CLIENT
from tests.support.jobs import execute, wait_for
from tests.support.paths import ROOT

# a deployed job starts Python and cwltool: about a second each
pytestmark = pytest.mark.slow
CWL_YAML = {"Content-Type": "application/cwl+yaml"}
PACKAGE = {"Content-Type": "application/ogcapppkg+json"}


@pytest.fixture
async def service(service_app, issuer) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    """The service with a data dir of its own (a password file in it, as the embedded
    cluster keeps them) and a worker; clients: dora deploys (right `deployProcess`, project
    ocean-lab), alice is in ocean-lab, bob in nothing, carol deploys in ocean-lab too, and
    an admin."""
    data_dir = ROOT / ".artifacts" / f"deploy-{uuid.uuid4().hex[:8]}"
    data_dir.mkdir(parents=True)
    (data_dir / "pg.password").write_text("superuser-secret")
    tokens = {
        "dora": issuer.token("dora", client=PROCESS_CLIENT, groups=["ocean-lab"],
                             rights=["deployProcess"]),
        "carol": issuer.token("carol", client=PROCESS_CLIENT, groups=["ocean-lab"],
                              rights=["deployProcess"]),
        "alice": issuer.token("alice", client=PROCESS_CLIENT, groups=["ocean-lab"]),
        "bob": issuer.token("bob", client=PROCESS_CLIENT),
        "admin": issuer.token("root", client=PROCESS_CLIENT, rights=["manageCollections"]),
    }
    try:
        async with service_app(geocatalog_data_dir=data_dir, in_process_worker=True,
                               job_queue=f"deploy-{uuid.uuid4().hex[:8]}") as started:
            clients = {name: started.client(token) for name, token in tokens.items()}
            yield {**clients, "anonymous": started.client(),  # type: ignore[dict-item]
                   "data_dir": data_dir}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


async def finished(client: httpx.AsyncClient, url: str) -> dict:
    job = await wait_for(client, url, "successful", "failed", "dismissed")
    assert job["status"] == "successful", job["message"]
    return (await client.get(f"{url}/results")).json()


async def log_until(client: httpx.AsyncClient, url: str, text: str) -> str:
    """The job's log once it holds `text` (bounded; not a timing assertion)."""
    deadline = time.monotonic() + 60
    while text not in (seen := (await client.get(f"{url}/logs")).text) and \
            time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return seen


def listed(r: httpx.Response) -> set[str]:
    return {p["id"] for p in r.json()["processes"]}


async def test_deploy_run_replace_undeploy_a_tool(service) -> None:
    dora, alice, bob, anonymous = (service[n] for n in ("dora", "alice", "bob", "anonymous"))
    name = unique("shout")
    r = await dora.post("/processes/processes", params={"visibility": "project",
                                                        "project": "ocean-lab"},
                        content=shout_tool(name), headers=CWL_YAML)
    assert r.status_code == 201, r.text
    assert r.headers["Location"] == f"http://testserver/processes/processes/{name}"
    assert (r.json()["id"], r.json()["title"], r.json()["mutable"]) == (name, "Shout", True)
    assert r.json()["jobControlOptions"] == ["sync-execute", "async-execute", "dismiss"]

    # seen and run by the project (alice), not by others, nor anonymously
    assert name in listed(await alice.get("/processes/processes"))
    assert name not in listed(await bob.get("/processes/processes"))
    assert name not in listed(await anonymous.get("/processes/processes"))
    builtin = (await anonymous.get("/processes/processes")).json()["processes"]
    assert {p["id"]: p["mutable"] for p in builtin}["echo"] is False
    r = await bob.get(f"/processes/processes/{name}")
    assert (r.status_code, r.json()["type"]) == (404, OGC + "no-such-process")
    assert (await execute(bob, name, {"message": "hi"})).status_code == 404

    described = (await alice.get(f"/processes/processes/{name}")).json()
    assert described["inputs"]["required"] == ["message"]
    assert described["inputs"]["properties"]["message"] == {"type": "string",
                                                            "title": "What to shout"}
    assert described["inputs"]["properties"]["times"] == {"type": "integer", "default": 2}
    assert set(described["outputs"]["properties"]) == {"shouted", "times_shouted"}
    r = await execute(alice, name, {"message": "hi", "times": "x"})
    assert r.status_code == 400 and "times" in r.json()["detail"]

    # run: asynchronously, then synchronously
    r = await execute(alice, name, {"message": "hi", "times": 3})
    assert r.status_code == 201, r.text
    results = await finished(alice, r.headers["Location"])
    assert results["times_shouted"] == 3
    assert results["shouted"]["contents"] == "HI HI HI \n"
    assert results["shouted"]["basename"] == "shouted.txt"
    assert "started 0" in (await alice.get(f"{r.headers['Location']}/logs")).text
    r = await execute(alice, name, {"message": "now"}, headers={"Prefer": "respond-sync"})
    assert r.status_code == 200, r.text
    assert r.json()["shouted"]["contents"] == "NOW NOW \n"

    # replaced while a job runs: that job ends on the old package, new jobs use the new one
    slow = (await execute(alice, name, {"message": "old", "seconds": 4})).headers["Location"]
    assert "started 4" in await log_until(alice, slow, "started 4")
    r = await alice.put(f"/processes/processes/{name}", content=shout_tool(name, "v2"),
                        headers=CWL_YAML)
    assert r.status_code == 403  # a member, without the right to deploy
    r = await service["carol"].put(f"/processes/processes/{name}",
                                   content=shout_tool(name, "v2"), headers=CWL_YAML)
    assert (r.status_code, r.json()["detail"]) == (
        403, "Only its owner or an administrator may change this deployed process.")
    r = await dora.put(f"/processes/processes/{name}", content=shout_tool(name, "v2"),
                       headers=CWL_YAML)
    assert r.status_code == 204, r.text
    new = (await execute(alice, name, {"message": "new"})).headers["Location"]
    assert (await finished(alice, new))["shouted"]["contents"] == "NEW NEW v2\n"
    assert (await finished(alice, slow))["shouted"]["contents"] == "OLD OLD \n"
    package = await alice.get(f"/processes/processes/{name}/package")
    assert (package.status_code, package.text) == (200, shout_tool(name, "v2"))
    assert package.headers["content-type"] == "application/cwl+yaml"

    # undeployed: no new jobs; the old jobs and their results stay
    assert (await dora.delete(f"/processes/processes/{name}")).status_code == 204
    assert (await alice.get(f"/processes/processes/{name}")).status_code == 404
    r = await execute(alice, name, {"message": "late"})
    assert (r.status_code, r.json()["type"]) == (404, OGC + "no-such-process")
    assert name not in listed(await alice.get("/processes/processes"))
    assert (await alice.get(f"{new}/results")).json()["shouted"]["contents"] == "NEW NEW v2\n"
    assert (await dora.delete(f"/processes/processes/{name}")).status_code == 404


async def test_a_two_step_workflow_from_an_application_package(service) -> None:
    dora, admin, bob = service["dora"], service["admin"], service["bob"]
    name = unique("shout-twice")
    body = application_package(name, TWO_STEPS, title="Shout twice", version="2.1.0")
    r = await dora.post("/processes/processes", content=body, headers=PACKAGE,
                        params={"visibility": "public"})
    assert (r.status_code, r.json()["detail"]) == (
        403, "Only an administrator may make a deployed process public.")
    r = await admin.post("/processes/processes", content=body, headers=PACKAGE,
                         params={"visibility": "public"})
    assert r.status_code == 201, r.text
    assert (r.json()["title"], r.json()["version"]) == ("Shout twice", "2.1.0")
    assert name in listed(await service["anonymous"].get("/processes/processes"))
    r = await execute(bob, name, {"message": "hey"})
    assert (await finished(bob, r.headers["Location"]))["final"]["contents"] == "HEY!\n"
    r = await execute(bob, name, {"message": "sync"}, headers={"Prefer": "respond-sync"})
    assert (r.status_code, r.json()["final"]["contents"]) == (200, "SYNC!\n")
    r = await admin.post("/processes/processes", content=body, headers=PACKAGE)
    assert (r.status_code, r.json()["type"]) == (409, OGC2 + "duplicated-process")
    assert r.headers["Location"].endswith(f"/processes/processes/{name}")
    assert (await admin.delete(f"/processes/processes/{name}")).status_code == 204


async def test_an_application_package_names_a_cwl_document_without_an_id(service) -> None:
    """`processDescription.id` names the process, as the docs say: it was refused when the
    CWL had no `id` of its own. A replacement by bare CWL keeps the id its CWL names."""
    dora = service["dora"]
    name = unique("unnamed")
    cwl = shout_tool(name).replace(f"id: {name}\n", "").replace("label: Shout\n", "")
    r = await dora.post("/processes/processes", content=application_package(name, cwl),
                        headers=PACKAGE)
    assert (r.status_code, r.json()["id"], r.json()["title"]) == (201, name, name), r.text
    r = await execute(dora, name, {"message": "hi", "times": 1, "seconds": 0},
                      headers={"Prefer": "respond-sync"})
    assert (r.status_code, r.json()["shouted"]["contents"]) == (200, "HI \n"), r.text
    r = await dora.put(f"/processes/processes/{name}", content=shout_tool("renamed"),
                       headers=CWL_YAML)
    assert (r.status_code, r.json()["detail"]) == (400, (
        f"The CWL document's id 'renamed' is not {name!r}: a replacement keeps the id.")), r.text
    r = await dora.put(f"/processes/processes/{name}", content=cwl, headers=CWL_YAML)
    assert (r.status_code, r.json()["detail"]) == (400, (
        "The CWL document has no `id`: a replacement keeps the id.")), r.text
    assert (await dora.get(f"/processes/processes/{name}")).json()["title"] == name
    r = await dora.put(f"/processes/processes/{name}", content=shout_tool(name, "!"),
                       headers=CWL_YAML)
    assert r.status_code == 204, r.text
    assert (await dora.delete(f"/processes/processes/{name}")).status_code == 204


async def size_of(client: httpx.AsyncClient) -> str:
    """A deployed process of the client's printing its file input's size (`size`)."""
    name = unique("size-of")
    r = await client.post("/processes/processes", headers=CWL_YAML, content=python_tool(
        name, "import os, sys\nprint(os.path.getsize(sys.argv[1]))", {"data": "File"},
        {"size": "stdout"}))
    assert r.status_code == 201, r.text
    return name


async def test_a_file_url_the_service_may_not_reach_is_refused_at_submission(
        service, monkeypatch) -> None:
    """It made a job that failed when it staged the file; a callback's was refused at
    submission already. The one policy text, no job."""
    monkeypatch.setenv("OUTBOUND_ALLOW", "")
    dora = service["dora"]
    name = await size_of(dora)
    before = [j["jobID"] for j in (await dora.get("/processes/jobs")).json()["jobs"]]
    for href in ("http://10.1.2.3/x.nc", "http://127.0.0.1:9/x.nc"):
        r = await execute(dora, name, {"data": {"href": href}})
        assert (r.status_code, r.json()["detail"]) == (400, (
            "processInputs.data: The address cannot be reached from here: give a public "
            "http(s) or S3 address (the service's OUTBOUND_ALLOW names the private networks "
            "it may reach).")), r.text
    assert [j["jobID"] for j in (await dora.get("/processes/jobs")).json()["jobs"]] == before
    assert (await dora.delete(f"/processes/processes/{name}")).status_code == 204


async def test_a_file_given_as_an_ogc_qualified_value_is_its_contents(service) -> None:
    """OGC's clients give a complex input by value as `{"value", "mediaType"}` in `inputs`:
    it was refused ("must be given by `contents`, or `href`, or `collection`")."""
    dora = service["dora"]
    name = await size_of(dora)
    r = await dora.post(f"/processes/processes/{name}/execution", headers={
        "Prefer": "respond-sync"}, json={"inputs": {"data": {
            "value": "one two", "mediaType": "text/plain"}}})
    assert (r.status_code, r.json()["size"]["contents"]) == (200, "7\n"), r.text
    assert (await dora.delete(f"/processes/processes/{name}")).status_code == 204


async def test_dismissing_a_deployed_job_ends_its_processes(service) -> None:
    dora = service["dora"]
    name = unique("shout")
    r = await dora.post("/processes/processes", content=shout_tool(name), headers=CWL_YAML)
    assert r.status_code == 201, r.text
    marker = f"marker{uuid.uuid4().hex[:8]}"
    url = (await execute(dora, name, {"message": marker, "seconds": 300})).headers["Location"]
    assert "started 300" in await log_until(dora, url, "started 300")

    def running() -> list[str]:
        found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
        return found.stdout.split()

    assert running()  # the tool, in the job's sandbox
    assert (await dora.delete(url)).json()["status"] == "dismissed"
    deadline = time.monotonic() + 30
    while running() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert running() == []


async def test_every_deployed_job_is_sandboxed(service, database_url: str) -> None:
    dora = service["dora"]
    name = unique("probe")
    r = await dora.post("/processes/processes", content=prober(name), headers=CWL_YAML)
    assert r.status_code == 201, r.text
    database = urlsplit(database_url)
    # a first job keeps a secret in its folder while a second one looks for it
    first = (await execute(dora, name, {"asked": json.dumps({
        "secret": "first-job-secret", "reads": [], "connects": [],
        "seconds": 300})})).headers["Location"]
    folder = (await log_until(dora, first, "folder ")).split("folder ", 1)[1].split()[0]
    asked = {"secret": "second", "connects": [[database.hostname, database.port],
                                              ["127.0.0.1", 22]],
             "reads": [str(service["data_dir"] / "pg.password"), f"{folder}/secret.txt",
                       f"/proc/{os.getpid()}/environ", "/etc/shadow"]}
    second = (await execute(dora, name, {"asked": json.dumps(asked)})).headers["Location"]
    report = json.loads((await finished(dora, second))["report"]["contents"])
    assert (await dora.delete(first)).status_code == 200
    assert report["read"] == {
        str(service["data_dir"] / "pg.password"): "FileNotFoundError",  # hidden
        f"{folder}/secret.txt": "FileNotFoundError",  # another job's /tmp is not its own
        f"/proc/{os.getpid()}/environ": "FileNotFoundError",  # the worker is not there
        "/etc/shadow": "PermissionError"}
    # no network: not even the loopback the database listens on
    assert report["connect"] == {f"{database.hostname}:{database.port}":
                                 "ConnectionRefusedError",
                                 "127.0.0.1:22": "ConnectionRefusedError"}
    # its /tmp holds its own folder only (the same path as the first job's, another mount)
    assert report["tmp"] == [folder.split("/")[2]] and folder.startswith("/tmp/job-")


#: A tool echoing its argument (`{argument}`: a parameter reference at line 9, column 5).
REFERENCING = """\
cwlVersion: v1.2
class: CommandLineTool
id: referencing
baseCommand: echo
inputs:
  message: string
stdout: said.txt
arguments:
  - {argument}
outputs:
  said: {{type: stdout}}
"""


async def test_a_run_that_fails_in_cwltool_says_what_failed(service) -> None:
    """The job's message is cwltool's error on one line; its log has the rest, without a
    traceback, the service's paths, or advice to run cwltool again."""
    dora = service["dora"]
    name = unique("referencing")
    r = await dora.post("/processes/processes", headers=CWL_YAML, content=REFERENCING.format(
        argument="$(inputs.nothing.basename)").replace("id: referencing", f"id: {name}"))
    assert r.status_code == 201, r.text
    url = (await execute(dora, name, {"message": "hi"})).headers["Location"]
    job = await wait_for(dora, url, "successful", "failed")
    assert (job["status"], job["message"]) == ("failed", (
        "package.cwl:9:5: Expression evaluation error: Syntax error in parameter reference "
        "'inputs.nothing.basename': inputs does not contain key 'nothing'.. This could be due "
        "to using Javascript code without specifying InlineJavascriptRequirement."))
    log = (await dora.get(f"{url}/logs")).text
    assert "inputs does not contain key 'nothing'" in log, log
    assert log.startswith("INFO cwltool "), log
    for hidden in ("Traceback", "--debug", sys.prefix, str(ROOT), "/opt/geocatalog"):
        assert hidden not in log, (hidden, log)


async def test_a_tool_that_fails_says_in_the_message_what_it_said(service) -> None:
    """The message was the whole end of the log: cwltool's INFO lines, its command line
    with the sandbox's folders, the tool's words, cwltool's permanentFail warning."""
    dora = service["dora"]
    name = unique("failer")
    r = await dora.post("/processes/processes", headers=CWL_YAML, content=(
        f"cwlVersion: v1.2\nclass: CommandLineTool\nid: {name}\ninputs: []\noutputs: []\n"
        "baseCommand: [sh, -c, 'echo oops >&2; echo twice >&2; exit 3']\n"))
    assert r.status_code == 201, r.text
    url = (await execute(dora, name, {})).headers["Location"]
    job = await wait_for(dora, url, "successful", "failed")
    assert (job["status"], job["message"]) == (
        "failed", "The CWL run failed (cwltool exit status 1): oops\ntwice")
    log = (await dora.get(f"{url}/logs")).text
    assert "permanentFail" in log and "oops\ntwice\n" in log, log


@pytest.mark.parametrize(("body", "kind", "status", "says"), [
    ("cwlVersion: v1.2\nclass: CommandLineTool\nid: broken\ninputs: {a: strin}\n"
     "outputs: {}\nbaseCommand: echo\n", "application/cwl+yaml", 400,
     "Invalid CWL: package.cwl:4:1:"),
    ("cwlVersion: v1.2\nclass: CommandLineTool\nid: boxed\n"
     "hints: {DockerRequirement: {dockerPull: alpine}}\ninputs: {}\noutputs: {}\n"
     "baseCommand: echo\n", "application/cwl+yaml", 400,
     "DockerRequirement: the image alpine comes from the registry docker.io, which this "
     "service does not allow (CONTAINER_REGISTRIES: none, local images only)."),
    ("cwlVersion: v1.2\nclass: CommandLineTool\nid: boxed\n"
     "requirements: {DockerRequirement: {dockerPull: ghcr.io/osgeo/gdal:latest}}\n"
     "inputs: {}\noutputs: {}\nbaseCommand: echo\n", "application/cwl+yaml", 400,
     "DockerRequirement: the image ghcr.io/osgeo/gdal:latest comes from the registry "
     "ghcr.io, which this service does not allow"),
    ("cwlVersion: v1.2\nclass: CommandLineTool\nid: built\n"
     "requirements: {DockerRequirement: {dockerPull: localhost/x, dockerFile: FROM scratch}}"
     "\ninputs: {}\noutputs: {}\nbaseCommand: echo\n", "application/cwl+yaml", 400,
     "DockerRequirement: dockerFile is not offered (images are never built or loaded from "
     "a package)"),
    ("cwlVersion: v1.2\nclass: Workflow\nid: elsewhere\ninputs: {}\noutputs: {}\n"
     "steps:\n  s:\n    run: https://example.org/tool.cwl\n    in: {}\n    out: []\n",
     "application/cwl+yaml", 400, "a package holds all it runs"),
    ("cwlVersion: v1.2\nclass: CommandLineTool\nid: echo\ninputs: {}\noutputs: {}\n"
     "baseCommand: echo\n", "application/cwl+yaml", 403, "is part of this service"),
    ('{"executionUnit": {"href": "https://example.org/x.cwl"}}', "application/ogcapppkg+json",
     400, "give the CWL by value"),
    ("a: &x [1]\nb: *x\n", "application/cwl+yaml", 400, "YAML aliases"),
    ('{"cwlVersion": "v1.2", "class": "CommandLineTool", "inputs": {}, "outputs": {}}',
     "application/json", 400, "This is CWL, sent as an OGC application package "
     "(application/json): send it as application/cwl+json"),
    ("<xml/>", "application/xml", 415, "A package is application/ogcapppkg+json or CWL"),
    ("cwlVersion: v1.2\nclass: CommandLineTool\ninputs: {}\noutputs: {}\nbaseCommand: echo\n",
     "application/cwl+yaml", 400, "The CWL document has no `id` (nor its application "
     "package a `processDescription.id`): it names the process."),
    # what cwltool reads only as it runs a tool: its parameter references
    (REFERENCING.format(argument="$(inputs.message[)"), "application/cwl+yaml", 400,
     "Invalid CWL: package.cwl:9:5: syntax error in the parameter reference "
     "$(inputs.message[) (JavaScript needs InlineJavascriptRequirement)."),
    (REFERENCING.format(argument="${return 1}"), "application/cwl+yaml", 400,
     "Invalid CWL: package.cwl:9:5: ${return 1} is JavaScript, which needs "
     "InlineJavascriptRequirement."),
    (REFERENCING.format(argument="$(input.message)"), "application/cwl+yaml", 400,
     "Invalid CWL: package.cwl:9:5: the parameter reference $(input.message) starts from "
     "'input'; it may start from inputs, self or runtime."),
])
async def test_a_package_that_cannot_be_deployed_says_why(service, body: str, kind: str,
                                                          status: int, says: str) -> None:
    r = await service["dora"].post("/processes/processes", content=body,
                                   headers={"Content-Type": kind})
    assert r.status_code == status, r.text
    assert says in r.json()["detail"], r.json()


async def test_deploying_needs_the_right_and_built_ins_stay(service) -> None:
    r = await service["alice"].post("/processes/processes", content=shout_tool("mine"),
                                    headers=CWL_YAML)
    assert (r.status_code, r.json()["detail"]) == (
        403, "This needs the right 'deployProcess', which your sign-in does not hold: an "
        "administrator of the service grants it.")
    for method in ("put", "delete"):
        r = await service["admin"].request(method, "/processes/processes/echo",
                                           content=shout_tool("echo"), headers=CWL_YAML)
        assert (r.status_code, r.json()["type"]) == (403, OGC2 + "immutable-process")
    r = await service["dora"].post("/processes/processes", content=shout_tool("x"),
                                   headers=CWL_YAML, params={"visibility": "project",
                                                             "project": "not-mine"})
    assert (r.status_code, r.json()["detail"]) == (
        403, "You are not a member of the project 'not-mine': only its members share "
             "deployed processes with it.")


async def test_a_secret_input_is_kept_as_any_secret(service, database_url: str) -> None:
    """An input cwltool's `Secrets` hint names is `writeOnly`: stored encrypted until the
    job ends, never shown, scrubbed from the job's log."""
    dora = service["dora"]
    name = unique("secretive")
    r = await dora.post("/processes/processes", content=secretive(name), headers=CWL_YAML)
    assert r.status_code == 201, r.text
    described = (await dora.get(f"/processes/processes/{name}")).json()
    assert described["inputs"]["properties"]["token"] == {"type": "string", "writeOnly": True}
    url = (await execute(dora, name, {"token": "tok-cwl-3f9a"})).headers["Location"]
    assert await finished(dora, url) == {}
    log = (await dora.get(f"{url}/logs")).text
    assert "using ***" in log and "tok-cwl-3f9a" not in log
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT inputs::text, secrets FROM processes.jobs WHERE id = %s",
                           (url.rsplit("/", 1)[1],)).fetchone()
    assert row == ('{"token": "***"}', None)


async def test_every_api_process_hears_of_a_deployment(service, app, issuer) -> None:
    """Deployed through one app (an API process of its own), listed at once by another
    (the session's), which reads deployments from memory: LISTEN/NOTIFY told it; gone
    from it the same way when undeployed."""
    name = unique("heard")
    r = await service["dora"].post("/processes/processes", content=shout_tool(name),
                                   headers=CWL_YAML, params={"visibility": "project",
                                                             "project": "ocean-lab"})
    assert r.status_code == 201, r.text
    async with http_client(app, issuer.token("alice", client=PROCESS_CLIENT,
                                             groups=["ocean-lab"])) as other:
        async def listed_there() -> bool:
            return name in listed(await other.get("/processes/processes"))

        assert await poll(listed_there, True)
        assert (await service["dora"].delete(f"/processes/processes/{name}")).status_code == 204
        assert await poll(listed_there, False)


async def poll(check, wanted: bool) -> bool:
    """Whether `check()` came to say `wanted` (bounded; not a timing assertion)."""
    deadline = time.monotonic() + 30
    while await check() != wanted and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return await check() == wanted


async def test_owslib_lists_and_runs_a_deployed_process(app, live_server: str,
                                                        issuer) -> None:
    """Deployed through a real uvicorn (no worker); the session app's worker runs it."""
    token = issuer.token("dora", client=PROCESS_CLIENT, rights=["deployProcess"])
    name = unique("ows-shout")
    # its package is checked in a process of its own: seconds on a busy machine
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                 timeout=120) as http:
        r = await http.post(f"{live_server}/processes/processes", content=shout_tool(name),
                            headers=CWL_YAML)
        assert r.status_code == 201, r.text
    defaults = dict(owslib.ogcapi.REQUEST_HEADERS)
    client = Processes(f"{live_server}/processes/",
                       headers={"Authorization": f"Bearer {token}"})
    client.headers = dict(client.headers)  # OWSLib shares its headers module-wide
    owslib.ogcapi.REQUEST_HEADERS.clear()
    owslib.ogcapi.REQUEST_HEADERS.update(defaults)
    assert name in {p["id"] for p in await asyncio.to_thread(client.processes)}
    described = await asyncio.to_thread(client.process, name)
    assert described["mutable"] is True
    results = await asyncio.to_thread(client.execute, name, {"message": "ows"})
    assert results["shouted"]["contents"] == "OWS OWS \n"  # synchronous: OWSLib waits


async def test_metrics_never_name_a_deployed_process(service) -> None:
    """A deployed process's id is its owner's (a private one's says what they work on):
    its jobs are counted as `deployed`."""
    dora = service["dora"]
    name = unique("private-plan")
    r = await dora.post("/processes/processes", content=shout_tool(name), headers=CWL_YAML)
    assert r.status_code == 201, r.text
    before = await scrape(dora)
    r = await execute(dora, name, {"message": "hi"}, headers={"Prefer": "wait=60"})
    assert r.status_code == 200, r.text
    after = await scrape(dora)
    assert not [labels for _, labels in after if any(name in v for _, v in labels)]
    assert value(after, "geocatalog_jobs_started_total", process="deployed") == \
        value(before, "geocatalog_jobs_started_total", process="deployed") + 1


async def test_a_package_of_too_many_steps_is_refused_before_it_is_loaded(service) -> None:
    """A 5,000-step workflow took 97 s of the API's process to load."""
    r = await service["dora"].post("/processes/processes", content=many_steps("huge", 5000),
                                   headers=CWL_YAML)
    assert (r.status_code, r.json()["detail"]) == (
        400, "The package has 5002 steps and processes; at most 256.")
    r = await service["dora"].post("/processes/processes",
                                   content=many_steps(unique("steps"), 200), headers=CWL_YAML)
    assert r.status_code == 201, r.text


async def test_a_package_check_is_bounded_in_time() -> None:
    """1 MB of JavaScript took JSHint 14.5 s: a check that passes its time is refused."""
    package = scripted("scripted", 15_000)
    started = time.monotonic()
    with pytest.raises(PackageError, match=r"^Checking the package took more than 1 s; "
                                           r"make it smaller\.$"):
        await checked(package, None, Sandbox.available(hidden=[]), job_environment(os.environ),
                      seconds=1)
    print(f"refused after {time.monotonic() - started:.1f} s")


@pytest.mark.parametrize("version", ["v1.0", "v1.1", "v1.2"])
async def test_every_cwl_version_the_docs_promise_deploys_and_runs(service, version) -> None:
    """cwltool's upgrade of a v1.0 document adds a NetworkAccess hint (v1.0's tools had
    network): it was refused, so was every v1.0 package."""
    dora = service["dora"]
    name = unique(f"say-{version.replace('.', '')}")
    r = await dora.post("/processes/processes", headers=CWL_YAML, content=f"""\
cwlVersion: {version}
class: CommandLineTool
id: {name}
baseCommand: echo
inputs:
  message: {{type: string, inputBinding: {{position: 1}}}}
outputs:
  said: stdout
""")
    assert r.status_code == 201, r.text
    r = await execute(dora, name, {"message": "hello"}, headers={"Prefer": "wait=60"})
    assert (r.status_code, r.json()["said"]["contents"]) == (200, "hello\n"), r.text


async def test_process_ids_are_unique_without_regard_to_case(service) -> None:
    """`Echo` beside the built-in `echo`, or `Shout` beside a deployed `shout`, misled users."""
    dora = service["dora"]
    r = await dora.post("/processes/processes", content=shout_tool("Echo"), headers=CWL_YAML)
    assert (r.status_code, r.json()) == (409, {
        "type": OGC2 + "duplicated-process", "title": "Conflict", "status": 409,
        "detail": "The id 'Echo' differs only in case from 'echo', a process of this service; "
                  "ids are unique without regard to case."})
    name = unique("shout")
    r = await dora.post("/processes/processes", content=shout_tool(name), headers=CWL_YAML)
    assert r.status_code == 201, r.text
    r = await dora.post("/processes/processes", content=shout_tool(name.upper()),
                        headers=CWL_YAML)
    # it names the process that has the id, as deployed, and leads to it
    assert (r.status_code, r.json()["detail"]) == (409, (
        f"A process {name!r} is deployed already (ids are unique without regard to case); "
        "replace it (PUT) instead."))
    assert r.headers["Location"].endswith(f"/processes/processes/{name}")
    # one that is not the caller's to see: named as the caller gave it, and not led to
    r = await service["carol"].post("/processes/processes", content=shout_tool(name.upper()),
                                    headers=CWL_YAML)
    assert (r.status_code, r.json()["detail"]) == (409, (
        f"A process {name.upper()!r} (or one whose id differs only in case) is deployed "
        "already.")), r.text
    assert "Location" not in r.headers
