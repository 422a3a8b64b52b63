"""OGC API Processes on a real database and real workers (procrastinate, child processes)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from process_api.errors import OGC
from tests.conftest import PROCESS_CLIENT, http_client


@pytest.fixture
async def bob(app, issuer) -> httpx.AsyncClient:
    async with http_client(app, issuer.token("bob", client=PROCESS_CLIENT)) as c:
        yield c


@pytest.fixture
async def carol(app, issuer) -> httpx.AsyncClient:
    """Another member of alice's project."""
    token = issuer.token("carol", client=PROCESS_CLIENT, groups=["/ocean-lab"])
    async with http_client(app, token) as c:
        yield c


async def execute(client: httpx.AsyncClient, process: str, inputs: dict[str, Any],
                  **body: Any) -> httpx.Response:
    return await client.post(f"/processes/processes/{process}/execution",
                             json={"processInputs": inputs, **body})


async def wait_for(client: httpx.AsyncClient, url: str, *statuses: str,
                   seconds: float = 60) -> dict:
    """Poll a job until it reaches one of `statuses` (bounded; not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while True:
        job = (await client.get(url)).json()
        if job["status"] in statuses or time.monotonic() > deadline:
            return job
        await asyncio.sleep(0.1)


def assert_ogc(r: httpx.Response, status: int, name: str | None = None) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) >= {"type", "title", "status", "detail"}
    assert body["status"] == status
    if name:
        assert body["type"] == OGC + name


async def test_landing_and_conformance(anon: httpx.AsyncClient) -> None:
    landing = (await anon.get("/processes/")).json()
    rels = {link["rel"] for link in landing["links"]}
    assert {"self", "service-desc", "service-doc"} <= rels
    for link in landing["links"]:
        assert (await anon.get(link["href"])).status_code in (200, 401), link
    classes = (await anon.get("/processes/conformance")).json()["conformsTo"]
    assert "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/core" in classes
    assert not [c for c in classes if c.endswith(("ogc-process-description", "oas30"))]
    assert (await anon.get("/processes/api")).json()["openapi"].startswith("3.")
    root = (await anon.get("/")).json()
    assert any(link["rel"] == "processes" for link in root["links"])


async def test_list_is_public_describe_needs_the_process_client(
    anon: httpx.AsyncClient, client: httpx.AsyncClient, alice: httpx.AsyncClient
) -> None:
    listed = (await anon.get("/processes/processes")).json()["processes"]
    by_id = {p["id"]: p for p in listed}
    assert {"echo", "sleep", "s3-manifest"} <= set(by_id)
    for p in listed:
        assert {"id", "title", "description", "version", "jobControlOptions", "links"} <= set(p)
    assert_ogc(await anon.get("/processes/processes/echo"), 401)
    assert_ogc(await client.get("/processes/processes/echo"), 403)  # a data-API token
    described = (await alice.get("/processes/processes/s3-manifest")).json()
    assert described["inputs"]["properties"]["s3"]["properties"]["secretAccessKey"][
        "writeOnly"] is True
    assert described["outputs"]["type"] == "object"
    assert_ogc(await alice.get("/processes/processes/nope"), 404, "no-such-process")


async def test_full_flow_echo(alice: httpx.AsyncClient) -> None:
    inputs = {"message": "hello", "object": {"a": [1, 2]}}
    r = await execute(alice, "echo", inputs)
    assert r.status_code == 201, r.text
    location = r.headers["Location"]
    info = r.json()
    assert location == f"http://testserver/processes/jobs/{info['jobID']}"
    assert info["status"] == "accepted" and info["type"] == "process"
    assert info["processID"] == "echo" and info["created"]
    job = await wait_for(alice, location, "successful", "failed")
    assert job["status"] == "successful", job
    assert job["progress"] == 100 and job["started"] and job["finished"]
    r = await alice.get(f"{location}/results")
    assert r.status_code == 200
    assert r.json() == inputs


async def test_standard_inputs_form_and_prefer(alice: httpx.AsyncClient) -> None:
    r = await alice.post("/processes/processes/echo/execution",
                         json={"inputs": {"message": "std"}},
                         headers={"Prefer": "respond-sync"})
    assert r.status_code == 201, r.text
    job = await wait_for(alice, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful"
    assert (await alice.get(f"{r.headers['Location']}/results")).json()["message"] == "std"


async def test_schema_rejection_lists_paths(alice: httpx.AsyncClient) -> None:
    before = len((await alice.get("/processes/jobs?limit=1000")).json()["jobs"])
    r = await execute(alice, "sleep", {"seconds": "long", "extra": 1,
                                       "resources": {"limits": {"memory": "lots"}}})
    assert_ogc(r, 400, "invalid-input")
    detail = r.json()["detail"]
    assert "seconds" in detail and "extra" in detail and "resources/limits/memory" in detail
    assert_ogc(await execute(alice, "sleep", {}), 400)
    assert len((await alice.get("/processes/jobs?limit=1000")).json()["jobs"]) == before


async def test_projects_and_other_users(alice, bob, carol) -> None:
    assert_ogc(await execute(alice, "echo", {"message": "x"},
                             metadata={"project": "not-mine"}), 403)
    r = await execute(alice, "echo", {"message": "lab"}, metadata={"project": "ocean-lab"})
    assert r.status_code == 201
    url = r.headers["Location"]
    assert (await carol.get(url)).json()["project"] == "ocean-lab"  # same project
    await wait_for(alice, url, "successful")
    assert (await carol.get(f"{url}/results")).status_code == 200
    assert_ogc(await bob.get(url), 404, "no-such-job")
    assert_ogc(await bob.get(f"{url}/results"), 404, "no-such-job")
    assert_ogc(await bob.delete(url), 404, "no-such-job")
    assert_ogc(await bob.get("/processes/jobs/not-a-uuid"), 404, "no-such-job")

    personal = (await execute(alice, "echo", {"message": "mine"})).headers["Location"]
    assert_ogc(await carol.get(personal), 404, "no-such-job")
    ids = {j["jobID"] for j in (await carol.get("/processes/jobs?limit=1000")).json()["jobs"]}
    assert url.rsplit("/", 1)[1] in ids and personal.rsplit("/", 1)[1] not in ids


async def test_job_list_filters_and_paging(alice: httpx.AsyncClient) -> None:
    for n in range(3):
        assert (await execute(alice, "echo", {"message": str(n)})).status_code == 201
    page = (await alice.get("/processes/jobs", params={"processID": "echo", "limit": 2})).json()
    assert len(page["jobs"]) == 2 and all(j["processID"] == "echo" for j in page["jobs"])
    next_url = next(link["href"] for link in page["links"] if link["rel"] == "next")
    second = (await alice.get(next_url)).json()["jobs"]
    assert not {j["jobID"] for j in second} & {j["jobID"] for j in page["jobs"]}
    r = await alice.get("/processes/jobs", params={"status": "successful,failed"})
    assert all(j["status"] in ("successful", "failed") for j in r.json()["jobs"])
    assert_ogc(await alice.get("/processes/jobs", params={"status": "sleeping"}), 400)


async def test_dismiss_running_and_queued(alice: httpx.AsyncClient, settings) -> None:
    # fill every slot of the in-process worker, then one more waits in the queue
    running = [(await execute(alice, "sleep", {"seconds": 60})).headers["Location"]
               for _ in range(settings.worker_concurrency)]
    for url in running:
        assert (await wait_for(alice, url, "running"))["status"] == "running"
    queued = (await execute(alice, "sleep", {"seconds": 60})).headers["Location"]
    await asyncio.sleep(1)
    assert (await alice.get(queued)).json()["status"] == "accepted"

    r = await alice.delete(queued)
    assert r.status_code == 200 and r.json()["status"] == "dismissed"
    for url in running:
        assert (await alice.delete(url)).json()["status"] == "dismissed"
    for url in running:  # the slots free up: the dismissed queued job must not start
        job = await wait_for(alice, url, "dismissed")
        assert job["status"] == "dismissed"
    marker = (await execute(alice, "echo", {"message": "after"})).headers["Location"]
    assert (await wait_for(alice, marker, "successful"))["status"] == "successful"
    job = (await alice.get(queued)).json()
    assert job["status"] == "dismissed" and "started" not in job
    assert_ogc(await alice.get(f"{queued}/results"), 404, "result-not-ready")


async def test_memory_limit_is_enforced(alice: httpx.AsyncClient) -> None:
    r = await execute(alice, "test-hog", {"mebibytes": 600,
                                          "resources": {"limits": {"memory": "256Mi"}}})
    job = await wait_for(alice, r.headers["Location"], "successful", "failed")
    assert job["status"] == "failed"
    assert "Memory limit exceeded" in job["message"] and "256Mi" in job["message"]
    r = await alice.get(f"{r.headers['Location']}/results")
    assert_ogc(r, 404, "job-results-failed")
    ok = await execute(alice, "test-hog", {"mebibytes": 20,
                                           "resources": {"limits": {"memory": "512Mi",
                                                                    "cpu": "500m"}}})
    job = await wait_for(alice, ok.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job


async def test_requests_beyond_the_worker_fail_clearly(alice: httpx.AsyncClient) -> None:
    r = await execute(alice, "echo", {"resources": {"requests": {"cpu": "512"}}})
    job = await wait_for(alice, r.headers["Location"], "successful", "failed")
    assert job["status"] == "failed" and "requests.cpu" in job["message"]


async def test_nul_characters_are_400(alice: httpx.AsyncClient) -> None:
    assert_ogc(await alice.get("/processes/jobs", params={"processID": "e\x00cho"}), 400)
    assert_ogc(await execute(alice, "echo", {"message": "a\x00b"}), 400)
