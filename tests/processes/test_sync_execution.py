"""Synchronous execution (OGC API Processes `sync-execute`, RFC 7240 `Prefer`): the results
in the response when the job ends within the wait, else the job to monitor; a real job
either way (listed, dismissable)."""

from __future__ import annotations

import httpx

from process_api.api.errors import OGC
from tests.support.jobs import execute, wait_for


async def test_respond_sync_answers_the_results(alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "echo", {"message": "now"},
                      headers={"Prefer": "respond-sync"})
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "now", "object": None}
    assert r.headers["Preference-Applied"] == "respond-sync"
    job = (await alice_processes.get(r.headers["Location"])).json()
    assert job["status"] == "successful"
    listed = (await alice_processes.get("/processes/jobs", params={"processID": "echo"})).json()
    assert job["jobID"] in {j["jobID"] for j in listed["jobs"]}
    described = (await alice_processes.get("/processes/processes/echo")).json()
    assert described["jobControlOptions"] == ["sync-execute", "async-execute", "dismiss"]


async def test_a_job_longer_than_the_wait_is_answered_as_async(
        alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "test-nap", {"seconds": 30},
                      headers={"Prefer": "wait=1"})
    assert r.status_code == 201, r.text
    assert r.headers["Preference-Applied"] == "respond-async"
    assert r.json()["status"] in ("accepted", "running")
    dismissed = await alice_processes.delete(r.headers["Location"])  # still a real job
    assert (dismissed.status_code, dismissed.json()["status"]) == (200, "dismissed")


async def test_wait_is_bounded_and_async_wins(alice_processes: httpx.AsyncClient,
                                              settings) -> None:
    r = await execute(alice_processes, "echo", {"message": "a"},
                      headers={"Prefer": "wait=100000"})
    assert r.status_code == 200
    assert r.headers["Preference-Applied"] == f"wait={int(settings.sync_wait_seconds)}"
    for prefer in ("respond-async", "respond-async, wait=10", "handling=lenient"):
        r = await execute(alice_processes, "echo", {"message": "a"}, headers={"Prefer": prefer})
        assert r.status_code == 201 and "Preference-Applied" not in r.headers, prefer


async def test_a_process_without_sync_execute_ignores_the_preference(
        alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "sleep", {"seconds": 0},
                      headers={"Prefer": "respond-sync"})
    assert r.status_code == 201 and "Preference-Applied" not in r.headers
    assert (await wait_for(alice_processes, r.headers["Location"], "successful"))[
        "status"] == "successful"


async def test_a_failing_sync_job_is_422_with_its_message(
        alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "test-fail", {"token": "hunter2-secret"},
                      headers={"Prefer": "respond-sync"})
    assert r.status_code == 422, r.text
    assert r.json() == {
        "type": OGC + "job-results-failed", "title": "Unprocessable Entity", "status": 422,
        "detail": "RuntimeError: could not reach the provider with ***"}
    assert r.headers["Preference-Applied"] == "respond-sync"
    job = (await alice_processes.get(r.headers["Location"])).json()
    assert job["status"] == "failed"
