"""Logs an operator can read: expected events are one line without a traceback; JSON
logs carry the request id, which the response echoes."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys

import httpx
import pytest

from stac_ext.platform.service.logs import (
    JsonFormatter,
    QuietOutages,
    RequestIdFilter,
    logging_config,
    new_request_id,
)
from tests.support.jobs import execute, wait_for


async def test_a_404_is_one_line(anon: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
                                 ) -> None:
    caplog.set_level(logging.INFO)
    r = await anon.get("/data/collections/no-such-collection")
    assert r.status_code == 404
    [record] = [r for r in caplog.records if r.name == "stac_ext.platform.service.errors"]
    assert record.levelno == logging.INFO and record.exc_info is None
    assert record.getMessage() == ("GET /data/collections/no-such-collection: 404 "
                                   "NotFoundError: Collection no-such-collection does not "
                                   "exist.")


async def test_a_dismissed_job_logs_no_traceback(alice_processes: httpx.AsyncClient,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    r = await execute(alice_processes, "sleep", {"seconds": 30})
    job = r.headers["Location"]
    assert (await wait_for(alice_processes, job, "running"))["status"] == "running"
    assert (await alice_processes.delete(job)).json()["status"] == "dismissed"
    # the worker has let go of the job once its procrastinate job ended
    job_id = job.rsplit("/", 1)[1]
    for _ in range(100):
        if any("ended with status" in r.getMessage() and job_id in r.getMessage()
               for r in caplog.records):
            break
        await asyncio.sleep(0.1)
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in
                                                          caplog.records if r.exc_info]
    assert "Traceback" not in caplog.text and "CancelledError" not in caplog.text
    # the engine's own line says what happened (procrastinate's says "Success")
    assert [r.getMessage() for r in caplog.records if r.name == "geocatalog.jobs"
            and job_id in r.getMessage()] == [f"job {job_id}: dismissed"]


async def test_a_job_s_end_is_logged_as_it_is(alice_processes: httpx.AsyncClient,
                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    ok = (await execute(alice_processes, "echo", {"message": "hi"})).headers["Location"]
    failing = (await execute(alice_processes, "test-fail", {"token": "s3cr3t-token"})
               ).headers["Location"]
    assert (await wait_for(alice_processes, ok, "successful"))["status"] == "successful"
    failed = await wait_for(alice_processes, failing, "failed")
    ended = {r.getMessage() for r in caplog.records if r.name == "geocatalog.jobs"}
    ok_id, failed_id = ok.rsplit("/", 1)[1], failing.rsplit("/", 1)[1]
    reason = failed["message"].splitlines()[0]
    assert f"job {ok_id} (echo): successful" in ended
    assert f"job {failed_id} (test-fail): failed: {reason}" in ended, ended
    assert "s3cr3t-token" not in caplog.text


def test_procrastinate_s_job_lines_are_quieted() -> None:
    """Its "ended with status: Success" is said of failed and dismissed jobs too."""
    config = logging_config("text")
    assert config["loggers"]["procrastinate.worker"] == {"level": "WARNING"}


@pytest.mark.unit
def test_libpq_s_words_for_every_host_of_a_cluster_are_one_line() -> None:
    """psycopg's pool logs libpq's failure for a URL of several hosts, a line per host."""
    said = ("connection failed: connection to server at \"10.0.0.11\", port 5432 failed: "
            "session is read-only\nMultiple connection attempts failed. All failures were:\n"
            "- host: '10.0.0.12', port: '5432', hostaddr: '10.0.0.12': connection failed: "
            "Connection refused\n\tIs the server running on that host and accepting TCP/IP "
            "connections?\n")
    record = logging.LogRecord("psycopg.pool", logging.WARNING, __file__, 1,
                               "error connecting in %r: %s", ("pool-1", said), None)
    assert QuietOutages().filter(record)
    assert record.getMessage() == (
        "error connecting in 'pool-1': connection failed: connection to server at "
        "\"10.0.0.11\", port 5432 failed: session is read-only Multiple connection attempts "
        "failed. All failures were: - host: '10.0.0.12', port: '5432', hostaddr: "
        "'10.0.0.12': connection failed: Connection refused")


async def test_the_request_id_is_echoed(anon: httpx.AsyncClient) -> None:
    r = await anon.get("/healthz", headers={"X-Request-ID": "abc-123"})
    assert r.headers["X-Request-ID"] == "abc-123"
    r = await anon.get("/healthz", headers={"X-Request-ID": "not ok; <script>"})
    assert len(r.headers["X-Request-ID"]) == 32 and r.headers["X-Request-ID"] != "not ok"
    r = await anon.get("/processes/processes")
    assert len(r.headers["X-Request-ID"]) == 32
    # a new id for each request: this process's half, then its count of requests
    again = await anon.get("/processes/processes")
    first, second = r.headers["X-Request-ID"], again.headers["X-Request-ID"]
    assert first[:16] == second[:16] and int(second[16:], 16) > int(first[16:], 16)
    assert r.headers.get_list("X-Request-ID") == [first]


def test_a_forked_process_makes_ids_of_its_own() -> None:
    """A worker forked from a process that made ids does not repeat them."""
    read, write = os.pipe()
    new_request_id()
    pid = os.fork()
    if pid == 0:  # the child: its first id, to the parent
        os.write(write, new_request_id().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child, ours = os.read(read, 64).decode(), new_request_id()
    assert len(child) == len(ours) == 32 and child[:16] != ours[:16]


def test_json_lines_with_the_request_id() -> None:
    record = logging.LogRecord("geocatalog", logging.WARNING, __file__, 1, "a %s", ("b",),
                               None)
    record.request_id = "r-1"
    assert json.loads(JsonFormatter().format(record)) == {
        "time": json.loads(JsonFormatter().format(record))["time"], "level": "WARNING",
        "logger": "geocatalog", "message": "a b", "request_id": "r-1"}
    try:
        raise ValueError("boom")
    except ValueError:
        failed = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (),
                                   sys.exc_info())
    assert "ValueError: boom" in json.loads(JsonFormatter().format(failed))["exception"]
    config = logging_config("json")
    assert config["formatters"]["default"] == {"()": "stac_ext.platform.service.logs.JsonFormatter"}
    assert RequestIdFilter().filter(record) and record.request_id is None  # no request
