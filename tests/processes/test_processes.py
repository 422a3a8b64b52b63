"""OGC API Processes on a real database and real workers (procrastinate, child processes)."""

from __future__ import annotations

import asyncio

import httpx
import psycopg
import pytest
from openapi_spec_validator import validate

from process_api.api.errors import OGC
from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT
from tests.support.jobs import execute, wait_for


@pytest.fixture
async def bob_processes(app, issuer) -> httpx.AsyncClient:
    async with http_client(app, issuer.token("bob", client=PROCESS_CLIENT)) as c:
        yield c


@pytest.fixture
async def carol_processes(app, issuer) -> httpx.AsyncClient:
    """Another member of alice's project."""
    token = issuer.token("carol", client=PROCESS_CLIENT, groups=["/ocean-lab"])
    async with http_client(app, token) as c:
        yield c


def assert_ogc(r: httpx.Response, status: int, name: str | None = None) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) >= {"type", "title", "status", "detail"}
    assert body["status"] == status
    if name:
        assert body["type"] == OGC + name


async def test_landing_and_conformance(anon: httpx.AsyncClient) -> None:
    landing = (await anon.get("/processes/")).json()
    ogc = "http://www.opengis.net/def/rel/ogc/1.0/"
    statuses = {link["rel"]: (await anon.get(link["href"])).status_code
                for link in landing["links"]}
    assert statuses == {"self": 200, "service-desc": 200, "service-doc": 200,
                        f"{ogc}conformance": 200, f"{ogc}processes": 200,
                        f"{ogc}job-list": 401}  # jobs are their owners' only
    classes = (await anon.get("/processes/conformance")).json()["conformsTo"]
    spec = "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/"
    part2 = "http://www.opengis.net/spec/ogcapi-processes-2/1.0/conf/"
    assert classes == [spec + name for name in (
        "core", "json", "job-list", "dismiss", "oas30", "callback")] + [
        "http://www.opengis.net/spec/ogcapi-processes-3/0.0/conf/collection-input"] + [
        part2 + name for name in ("deploy-replace-undeploy", "ogcapppkg", "cwl")] + [
        spec + "html"]


async def test_the_openapi_document_is_openapi_3_0(anon: httpx.AsyncClient) -> None:
    """`oas30`: FastAPI writes 3.1; the document served is converted, and valid 3.0."""
    landing = (await anon.get("/processes/")).json()
    [desc] = [link for link in landing["links"] if link["rel"] == "service-desc"]
    assert desc["type"] == "application/vnd.oai.openapi+json;version=3.0"
    r = await anon.get(desc["href"])
    assert r.headers["content-type"] == desc["type"]
    document = r.json()
    assert document["openapi"] == "3.0.3"
    validate(document)  # openapi-spec-validator: the OpenAPI 3.0 schema, strictly
    prefer = next(p for p in document["paths"]["/processes/{process_id}/execution"]["post"][
        "parameters"] if p["name"] == "prefer")
    assert prefer["schema"] == {"type": "string", "maxLength": 1024, "nullable": True,
                                "title": "Prefer"}
    root = (await anon.get("/")).json()
    assert [link["href"] for link in root["links"] if link["rel"] == "processes"] == [
        "http://testserver/processes/"]


async def test_list_is_public_describe_needs_the_process_client(
    anon: httpx.AsyncClient, alice_data: httpx.AsyncClient, alice_processes: httpx.AsyncClient
) -> None:
    listed = (await anon.get("/processes/processes")).json()["processes"]
    by_id = {p["id"]: p for p in listed}
    assert {"echo", "sleep", "s3-manifest"} <= set(by_id)
    for p in listed:
        assert {"id", "title", "description", "version", "jobControlOptions", "links"} <= set(p)
    assert_ogc(await anon.get("/processes/processes/echo"), 401)
    assert_ogc(await alice_data.get("/processes/processes/echo"), 403)  # a data-API token
    described = (await alice_processes.get("/processes/processes/s3-manifest")).json()
    assert described["inputs"]["properties"]["s3"]["properties"]["secretAccessKey"][
        "writeOnly"] is True
    assert described["outputs"]["type"] == "object"
    assert_ogc(await alice_processes.get("/processes/processes/nope"), 404, "no-such-process")


async def test_full_flow_echo(alice_processes: httpx.AsyncClient) -> None:
    inputs = {"message": "hello", "object": {"a": [1, 2]}}
    r = await execute(alice_processes, "echo", inputs)
    assert r.status_code == 201, r.text
    location = r.headers["Location"]
    info = r.json()
    assert location == f"http://testserver/processes/jobs/{info['jobID']}"
    assert info["status"] == "accepted" and info["type"] == "process"
    assert info["processID"] == "echo" and info["created"]
    job = await wait_for(alice_processes, location, "successful", "failed")
    assert job["status"] == "successful", job
    assert job["progress"] == 100 and job["started"] and job["finished"]
    r = await alice_processes.get(f"{location}/results")
    assert r.status_code == 200
    assert r.json() == inputs


async def test_standard_inputs_form(alice_processes: httpx.AsyncClient) -> None:
    r = await alice_processes.post("/processes/processes/echo/execution",
                                   json={"inputs": {"message": "std"}})
    assert r.status_code == 201, r.text
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful"
    results = (await alice_processes.get(f"{r.headers['Location']}/results")).json()
    assert results["message"] == "std"


async def test_schema_rejection_lists_paths(alice_processes: httpx.AsyncClient) -> None:
    before = len((await alice_processes.get("/processes/jobs?limit=1000")).json()["jobs"])
    r = await execute(alice_processes, "sleep", {"seconds": "long", "extra": 1,
                                       "resources": {"limits": {"memory": "lots"}}})
    assert_ogc(r, 400, "invalid-input")
    detail = r.json()["detail"]
    assert "seconds" in detail and "extra" in detail and "resources/limits/memory" in detail
    assert_ogc(await execute(alice_processes, "sleep", {}), 400)
    assert len((await alice_processes.get("/processes/jobs?limit=1000")).json()["jobs"]) == before


async def test_projects_and_other_users(alice_processes, bob_processes, carol_processes) -> None:
    assert_ogc(await execute(alice_processes, "echo", {"message": "x"},
                             metadata={"project": "not-mine"}), 403)
    r = await execute(alice_processes, "echo", {"message": "lab"},
                      metadata={"project": "ocean-lab"})
    assert r.status_code == 201
    url = r.headers["Location"]
    assert (await carol_processes.get(url)).json()["project"] == "ocean-lab"  # same project
    await wait_for(alice_processes, url, "successful")
    assert (await carol_processes.get(f"{url}/results")).status_code == 200
    assert_ogc(await bob_processes.get(url), 404, "no-such-job")
    assert_ogc(await bob_processes.get(f"{url}/results"), 404, "no-such-job")
    assert_ogc(await bob_processes.delete(url), 404, "no-such-job")
    assert_ogc(await bob_processes.get("/processes/jobs/not-a-uuid"), 404, "no-such-job")

    personal = (await execute(alice_processes, "echo", {"message": "mine"})).headers["Location"]
    assert_ogc(await carol_processes.get(personal), 404, "no-such-job")
    jobs = (await carol_processes.get("/processes/jobs?limit=1000")).json()["jobs"]
    ids = {j["jobID"] for j in jobs}
    assert url.rsplit("/", 1)[1] in ids and personal.rsplit("/", 1)[1] not in ids


async def test_an_admin_reads_and_dismisses_any_job(alice_processes, bob_processes, app,
                                                    issuer) -> None:
    """The access table's job rule: owner, a member of its project, or an admin of the
    process API; the job list stays each caller's own."""
    url = (await execute(alice_processes, "sleep", {"seconds": 30})).headers["Location"]
    job_id = url.rsplit("/", 1)[1]
    admin = issuer.token("root", client=PROCESS_CLIENT, rights=[ADMIN_RIGHT])
    async with http_client(app, admin) as root:
        r = await root.get(url)
        assert (r.status_code, r.json()["owner"]) == (200, "alice")
        listed = {j["jobID"] for j in (await root.get("/processes/jobs?limit=1000")).json()["jobs"]}
        assert job_id not in listed
        assert_ogc(await bob_processes.delete(url), 404, "no-such-job")
        r = await root.delete(url)
        assert (r.status_code, r.json()["status"]) == (200, "dismissed")
    assert_ogc(await alice_processes.get(url), 404, "no-such-job")


async def test_job_list_filters_and_paging(alice_processes: httpx.AsyncClient) -> None:
    for n in range(3):
        assert (await execute(alice_processes, "echo", {"message": str(n)})).status_code == 201
    page = (await alice_processes.get("/processes/jobs",
                                      params={"processID": "echo", "limit": 2})).json()
    assert len(page["jobs"]) == 2 and all(j["processID"] == "echo" for j in page["jobs"])
    assert [link["rel"] for link in page["links"]] == ["self", "next"]
    next_url = next(link["href"] for link in page["links"] if link["rel"] == "next")
    second = (await alice_processes.get(next_url)).json()
    assert not {j["jobID"] for j in second["jobs"]} & {j["jobID"] for j in page["jobs"]}
    prev_url = next(link["href"] for link in second["links"] if link["rel"] == "prev")
    assert _ids(await alice_processes.get(prev_url)) == {j["jobID"] for j in page["jobs"]}
    r = await alice_processes.get("/processes/jobs", params={"status": "successful,failed"})
    assert all(j["status"] in ("successful", "failed") for j in r.json()["jobs"])
    assert_ogc(await alice_processes.get("/processes/jobs", params={"status": "sleeping"}), 400)


def _ids(r: httpx.Response) -> set[str]:
    assert r.status_code == 200, r.text
    return {job["jobID"] for job in r.json()["jobs"]}


async def test_job_list_by_type_datetime_and_duration(alice_processes: httpx.AsyncClient
                                                      ) -> None:
    """OGC Part 1's job list parameters: `type`, `processID` (repeated or comma-separated),
    `datetime` (created within), `minDuration`/`maxDuration` (seconds run)."""
    quick = (await execute(alice_processes, "echo", {"message": "quick"})).headers["Location"]
    slow = (await execute(alice_processes, "sleep", {"seconds": 2})).headers["Location"]
    quick_job = await wait_for(alice_processes, quick, "successful")
    slow_job = await wait_for(alice_processes, slow, "successful")
    ours = {quick_job["jobID"], slow_job["jobID"]}
    since = quick_job["created"]

    async def listed(**params: object) -> set[str]:
        return _ids(await alice_processes.get("/processes/jobs",
                                              params={"limit": 1000, **params})) & ours

    assert await listed() == ours
    assert await listed(type="process") == ours
    assert await listed(type="provider") == set()
    assert await listed(processID="echo,sleep") == ours
    assert await listed(processID=["sleep", "nothing"]) == {slow_job["jobID"]}
    assert await listed(datetime=f"{since}/..") == ours
    assert await listed(datetime=since) == {quick_job["jobID"]}
    assert await listed(datetime=f"../{slow_job['created']}") == ours
    assert await listed(datetime="2000-01-01T00:00:00Z/2001-01-01T00:00:00Z") == set()
    assert await listed(minDuration=1.5) == {slow_job["jobID"]}
    assert await listed(maxDuration=1.5) == {quick_job["jobID"]}
    assert await listed(minDuration=0, maxDuration=60) == ours
    for params, name in (({"datetime": "yesterday"}, "datetime 'yesterday'"),
                         ({"datetime": "2001-01-01Z/2000-01-01Z"}, "datetime"),
                         ({"minDuration": 5, "maxDuration": 1}, "minDuration"),
                         ({"minDuration": -1}, "minDuration")):
        r = await alice_processes.get("/processes/jobs", params=params)
        assert r.status_code == 400, (params, r.text)
        assert name in r.text, r.text


async def test_dismiss_running_and_queued(alice_processes: httpx.AsyncClient, settings) -> None:
    # fill every slot of the in-process worker, then one more waits in the queue
    running = [(await execute(alice_processes, "sleep", {"seconds": 60})).headers["Location"]
               for _ in range(settings.worker_concurrency)]
    for url in running:
        assert (await wait_for(alice_processes, url, "running"))["status"] == "running"
    queued = (await execute(alice_processes, "sleep", {"seconds": 60})).headers["Location"]
    await asyncio.sleep(1)
    assert (await alice_processes.get(queued)).json()["status"] == "accepted"

    r = await alice_processes.delete(queued)
    assert r.status_code == 200 and r.json()["status"] == "dismissed"
    for url in running:
        assert (await alice_processes.delete(url)).json()["status"] == "dismissed"
    # the slots free up (the children are killed), and the dismissed queued job never starts
    marker = (await execute(alice_processes, "echo", {"message": "after"})).headers["Location"]
    assert (await wait_for(alice_processes, marker, "successful"))["status"] == "successful"
    # a dismissed job is gone for its owner (OGC): status, results, a second dismissal...
    for url in (queued, *running):
        assert_ogc(await alice_processes.get(url), 404, "no-such-job")
        assert_ogc(await alice_processes.get(f"{url}/results"), 404, "no-such-job")
        assert_ogc(await alice_processes.delete(url), 404, "no-such-job")
    listed = (await alice_processes.get("/processes/jobs", params={"limit": 1000})).json()
    gone = {url.rsplit("/", 1)[-1] for url in (queued, *running)}
    assert not gone & {job["jobID"] for job in listed["jobs"]}
    # ...while the record stays for audit, the queued one never started
    with psycopg.connect(settings.database_url) as conn:
        rows = conn.execute("SELECT id::text, status, started IS NOT NULL FROM processes.jobs "
                            "WHERE id = ANY(%s::uuid[])", (sorted(gone),)).fetchall()
    assert sorted(rows) == sorted((url.rsplit("/", 1)[-1], "dismissed", url != queued)
                                  for url in (queued, *running))


async def test_memory_limit_is_enforced(alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "test-hog", {"mebibytes": 600,
                                          "resources": {"limits": {"memory": "256Mi"}}})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "failed"
    assert job["message"] == ("Memory limit exceeded: the job needed more than 256Mi (its "
                              "resources.limits.memory).")
    r = await alice_processes.get(f"{r.headers['Location']}/results")
    assert_ogc(r, 404, "job-results-failed")
    ok = await execute(alice_processes, "test-hog", {"mebibytes": 20,
                                           "resources": {"limits": {"memory": "512Mi",
                                                                    "cpu": "500m"}}})
    job = await wait_for(alice_processes, ok.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job


async def test_results_beyond_what_a_job_may_return_fail_clearly(
        alice_processes: httpx.AsyncClient) -> None:
    """Results are one line of the worker's protocol, at most 64 MiB: a job returning more
    failed as "could not run this job (ValueError)" with a traceback in the log."""
    r = await execute(alice_processes, "test-big", {"mebibytes": 65})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert (job["status"], job["message"]) == ("failed", (
        "The job's results are 65 MiB as JSON, more than the 64 MiB a job may return; a "
        "process writes large results to files."))


async def test_requests_beyond_the_worker_fail_clearly(alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "echo", {"resources": {"requests": {"cpu": "512"}}})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "failed" and "requests.cpu" in job["message"]


async def test_nul_characters_are_400(alice_processes: httpx.AsyncClient) -> None:
    assert_ogc(await alice_processes.get("/processes/jobs", params={"processID": "e\x00cho"}), 400)
    assert_ogc(await execute(alice_processes, "echo", {"message": "a\x00b"}), 400)


async def test_the_ogc_process_description_on_request(alice_processes: httpx.AsyncClient
                                                      ) -> None:
    """Our description holds JSON Schemas of the whole body; `profile=ogc` answers OGC's
    form: inputs and outputs by id, each with its schema (not claimed: see README)."""
    r = await alice_processes.get("/processes/processes/echo", params={"profile": "ogc"})
    assert r.status_code == 200
    described = r.json()
    assert described["id"] == "echo"
    assert described["inputs"]["message"] == {"schema": {"type": "string"}, "title": "message",
                                              "minOccurs": 0, "maxOccurs": 1}
    assert set(described["inputs"]) == {"message", "object", "resources"}
    assert described["outputs"] == {
        "message": {"schema": {"type": ["string", "null"]}, "title": "message"},
        "object": {"schema": {"type": ["object", "null"]}, "title": "object"}}
    required = (await alice_processes.get("/processes/processes/sleep",
                                          params={"profile": "ogc"})).json()["inputs"]
    assert (required["seconds"]["minOccurs"], required["resources"]["minOccurs"]) == (1, 0)
    assert_ogc(await alice_processes.get("/processes/processes/echo",
                                         params={"profile": "wps"}), 400)


async def test_a_short_job_ends_while_a_long_one_runs(alice_processes: httpx.AsyncClient
                                                      ) -> None:
    """Jobs forked by one fork server do not hold each other's connections: a short job
    started first is done while a long one forked after it still runs."""
    short = (await execute(alice_processes, "sleep", {"seconds": 2})).headers["Location"]
    assert (await wait_for(alice_processes, short, "running"))["status"] == "running"
    long = (await execute(alice_processes, "sleep", {"seconds": 600})).headers["Location"]
    assert (await wait_for(alice_processes, long, "running"))["status"] == "running"
    assert (await wait_for(alice_processes, short, "successful"))["status"] == "successful"
    assert (await alice_processes.get(long)).json()["status"] == "running"
    assert (await alice_processes.delete(long)).json()["status"] == "dismissed"


@pytest.mark.unit
@pytest.mark.parametrize(("inputs", "detail"), [
    ({"files": [{"href": "the item's page"}]},
     "files/0/href: is not in the form expected (an http(s) or s3:// URL)"),
    ({"files": [{"hrfe": "https://example.org/x.nc"}]},
     "files/0: must be given by `contents`, or `href`, or `collection`"),
    ({"files": [{"collection": "https://example.org/data/collections/c", "bbox": [1, 2]}]},
     "files/0/bbox: must hold at least 4 entries"),
    ({"files": [{"contents": 3}]}, "files/0/contents: must be text"),
])
def test_inputs_that_fail_the_schema_are_said_in_words(inputs: dict, detail: str) -> None:
    """A file input that failed the schema answered a truncated JSON Schema dump
    ("files/0: must satisfy oneOf [{"type": ...)."""
    import jsonschema

    from process_api.api.input_errors import in_words
    from process_api.data.file_inputs import FILE_INPUT

    schema = {"type": "object", "properties": {"files": {"type": "array", "items": FILE_INPUT}}}
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(inputs))
    assert [in_words(e) for e in errors] == [detail]


@pytest.mark.unit
def test_a_file_given_as_an_ogc_link_is_a_reference() -> None:
    """OGC's clients give a reference as a link, with its media type: it was refused
    ("'type' was unexpected")."""
    import jsonschema

    from process_api.data.file_inputs import FILE_INPUT

    link = {"href": "https://example.org/sst.nc", "type": "application/netcdf",
            "rel": "data", "title": "SST"}
    assert list(jsonschema.Draft202012Validator(FILE_INPUT).iter_errors(link)) == []


@pytest.mark.unit
def test_a_process_deployed_before_takes_todays_file_forms() -> None:
    """A deployed process keeps the inputs schema of its day: its file inputs are
    recognised by their forms and read with today's (an OGC link's `type` was refused)."""
    import jsonschema

    from process_api.data.file_inputs import (
        BY_COLLECTION,
        BY_CONTENTS,
        FILE_INPUT,
        current_file_inputs,
        references,
    )

    then = {"type": "object", "required": ["href"], "additionalProperties": False,
            "properties": {"href": {"type": "string"}}}
    forms = {"oneOf": [BY_CONTENTS, then, BY_COLLECTION], "description": "its own"}
    stored = {"type": "object", "properties": {
        "one": forms, "many": {"type": "array", "items": forms}, "word": {"type": "string"}}}
    now = current_file_inputs(stored)
    assert now["properties"]["one"] == {**forms, "oneOf": FILE_INPUT["oneOf"]}
    assert now["properties"]["many"]["items"]["oneOf"] == FILE_INPUT["oneOf"]
    assert now["properties"]["word"] == {"type": "string"}
    link = {"href": "https://example.org/sst.nc", "type": "application/netcdf"}
    inputs = {"one": link, "many": [link, {"contents": "x"}], "word": "hi"}
    assert list(jsonschema.Draft202012Validator(now).iter_errors(inputs)) == []
    assert list(references(inputs, stored)) == [("one", None, link), ("many", 0, link)]


@pytest.mark.unit
def test_a_files_qualified_value_is_its_contents_and_nothing_is_added() -> None:
    """OGC's `{"value", "mediaType"}` becomes `contents`; an optional file not given stays
    absent (it became null, which no form takes)."""
    from process_api.data.file_inputs import FILE_INPUT, as_contents

    schema = {"type": "object", "properties": {
        "one": FILE_INPUT, "many": {"type": "array", "items": FILE_INPUT}, "n": {}}}
    given = {"value": "1,2\n", "mediaType": "text/csv"}
    assert as_contents({"one": given, "many": [given, {"href": "s3://b/k"}], "n": given},
                       schema) == {"one": {"contents": "1,2\n"},
                                   "many": [{"contents": "1,2\n"}, {"href": "s3://b/k"}],
                                   "n": given}
    assert as_contents({}, schema) == {}
