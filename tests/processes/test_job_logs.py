"""A job's log: what its process (and what that starts) writes, at
`/processes/jobs/{id}/logs` while it runs and after, secrets scrubbed, its tail bounded."""

from __future__ import annotations

import asyncio
import time

import httpx

from process_api.jobs.job_log import LOG_CHARS
from tests.support.http import http_client
from tests.support.issuer import PROCESS_CLIENT
from tests.support.jobs import execute, wait_for


async def test_logs_while_running_scrubbed_then_gone_with_the_job(
        alice_processes: httpx.AsyncClient, app, issuer) -> None:
    r = await execute(alice_processes, "test-chatty", {"token": "tok-5d2e-secret",
                                                       "seconds": 120})
    url = r.headers["Location"]
    logs = next(link for link in r.json()["links"] if link["rel"] == "logs")
    assert logs == {"rel": "logs", "type": "text/plain", "title": "Output of the job's process",
                    "href": f"{url}/logs"}
    deadline = time.monotonic() + 60  # bounded; not a timing assertion
    while "waiting" not in (seen := (await alice_processes.get(logs["href"])).text) and \
            time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert seen == "token is ***\nfrom a child process\nwaiting\n"
    running = await alice_processes.get(url)
    assert running.json()["status"] == "running"
    r = await alice_processes.get(logs["href"])
    assert (r.status_code, r.headers["content-type"]) == (200, "text/plain; charset=utf-8")

    async with http_client(app, issuer.token("bob", client=PROCESS_CLIENT)) as bob:
        r = await bob.get(logs["href"])
        assert r.status_code == 404 and r.json()["type"].endswith("/no-such-job")

    assert (await alice_processes.delete(url)).status_code == 200
    r = await alice_processes.get(logs["href"])
    assert r.status_code == 404 and r.json()["type"].endswith("/no-such-job")


async def test_a_flood_keeps_its_end(alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "test-chatty",
                      {"token": "tok-flood", "flood": 3 * LOG_CHARS})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job
    text = (await alice_processes.get(f"{r.headers['Location']}/logs")).text
    head, kept = text.split("\n", 1)
    written = len("token is ***\nfrom a child process\n") + 3 * LOG_CHARS + len(
        "\nwaiting\nthe end\n")
    assert head == f"[{written - LOG_CHARS} earlier characters not kept]"
    assert len(kept) == LOG_CHARS and kept.endswith("x\nwaiting\nthe end\n")


async def test_a_command_s_stderr_is_its_log(alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "test-command-fail", {"token": "tok-77aa-secret"})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "failed"
    text = (await alice_processes.get(f"{r.headers['Location']}/logs")).text
    assert text == "lots of output\n" * 500 + "\nprovider refused the token ***\n"


async def test_a_job_that_writes_nothing_has_an_empty_log(
        alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "echo", {"message": "quiet"})
    await wait_for(alice_processes, r.headers["Location"], "successful")
    r = await alice_processes.get(f"{r.headers['Location']}/logs")
    assert (r.status_code, r.text) == (200, "")


async def test_a_secret_cut_between_two_pieces_of_output_is_scrubbed(
        alice_processes: httpx.AsyncClient) -> None:
    """A line longer than the relay's 16,384 bytes comes in pieces: a secret across the cut
    was stored in clear."""
    r = await execute(alice_processes, "test-chatty", {"token": "tok-9f31-secret",
                                                       "straddle": True})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job
    text = (await alice_processes.get(f"{r.headers['Location']}/logs")).text
    assert text == ("token is ***\nfrom a child process\n" + "x" * (16384 - 4) + "***\n"
                    "waiting\nthe end\n")


async def test_a_short_secret_is_scrubbed_where_it_stands_alone(
        alice_processes: httpx.AsyncClient) -> None:
    """A one-letter secret was scrubbed inside every word ("Runtim***Error"), which told it."""
    r = await execute(alice_processes, "test-fail", {"token": "e"})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["message"] == "RuntimeError: could not reach the provider with ***"
    r = await execute(alice_processes, "test-chatty", {"token": "e"})
    await wait_for(alice_processes, r.headers["Location"], "successful")
    text = (await alice_processes.get(f"{r.headers['Location']}/logs")).text
    assert text == "token is ***\nfrom a child process\nwaiting\nthe end\n"
