"""Callbacks (OGC `callback` class): a real HTTP server on loopback receives what the worker
POSTs for a job's `subscriber`: in order, retried after a 500, never to a forbidden
address."""

from __future__ import annotations

import json
import logging
import selectors
import socket
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from process_api.jobs.callbacks import Notifier
from tests.support.http import free_port
from tests.support.issuer import PROCESS_CLIENT
from tests.support.jobs import execute, until, wait_for


class Receiver:
    """Records every POST (path, JSON body); a path in `failing` answers 500 that often."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict]] = []
        self.failing: dict[str, int] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                receiver.received.append((self.path, body))
                if receiver.failing.get(self.path, 0) > 0:
                    receiver.failing[self.path] -= 1
                    self.send_response(500)
                else:
                    self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def paths(self) -> list[str]:
        return [path for path, _ in self.received]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    yield found
    found.server.shutdown()


def subscriber(receiver: Receiver, tag: str) -> dict[str, str]:
    return {"successUri": f"{receiver.url}/{tag}/success",
            "inProgressUri": f"{receiver.url}/{tag}/progress",
            "failedUri": f"{receiver.url}/{tag}/failed"}


async def test_in_progress_then_success_with_the_results(
        alice_processes: httpx.AsyncClient, receiver: Receiver) -> None:
    r = await execute(alice_processes, "echo", {"message": "call me"},
                      subscriber=subscriber(receiver, "ok"))
    assert r.status_code == 201, r.text
    assert await until(lambda: len(receiver.received) == 2)
    (first, progress), (second, results) = receiver.received
    assert (first, second) == ("/ok/progress", "/ok/success")
    assert progress["status"] == "running" and progress["jobID"] == r.json()["jobID"]
    assert progress["links"][0]["href"] == r.headers["Location"]
    assert results == {"message": "call me", "object": None}


async def test_a_callback_is_retried_after_a_500(alice_processes: httpx.AsyncClient,
                                                 receiver: Receiver) -> None:
    receiver.failing["/flaky/success"] = 1
    await execute(alice_processes, "echo", {"message": "again"},
                  subscriber=subscriber(receiver, "flaky"))
    assert await until(lambda: receiver.paths().count("/flaky/success") == 2)
    assert receiver.paths() == ["/flaky/progress", "/flaky/success", "/flaky/success"]
    assert receiver.received[-1][1] == {"message": "again", "object": None}


async def test_failure_goes_to_failed_uri(alice_processes: httpx.AsyncClient,
                                          receiver: Receiver) -> None:
    r = await execute(alice_processes, "test-fail", {"token": "tok-callback-secret"},
                      subscriber=subscriber(receiver, "bad"))
    assert await until(lambda: len(receiver.received) == 2)
    assert receiver.paths() == ["/bad/progress", "/bad/failed"]
    failed = receiver.received[1][1]
    assert failed["status"] == "failed" and failed["jobID"] == r.json()["jobID"]
    assert "tok-callback-secret" not in json.dumps(receiver.received)


async def test_a_forbidden_callback_is_refused_at_submission(
        alice_processes: httpx.AsyncClient, receiver: Receiver, monkeypatch) -> None:
    """Without OUTBOUND_ALLOW naming loopback (the tests allow it), a loopback callback is a
    400 naming it (and the policy's one text), and no job is made."""
    monkeypatch.setenv("OUTBOUND_ALLOW", "")
    before = (await alice_processes.get("/processes/jobs", params={"limit": 1000})).json()
    r = await execute(alice_processes, "echo", {"message": "hush"}, subscriber={
        # a public address literal (no DNS here); the loopback one is refused
        "successUri": "https://192.0.32.10/fine", "failedUri": f"{receiver.url}/x?token=abc"})
    assert r.status_code == 400
    assert r.json()["detail"] == (
        "subscriber.failedUri: The address cannot be reached from here: give a public "
        "http(s) or S3 address (the service's OUTBOUND_ALLOW names the private networks it "
        "may reach).")
    after = (await alice_processes.get("/processes/jobs", params={"limit": 1000})).json()
    # the same jobs, by id: another test's job may change state between the two lists
    assert [j["jobID"] for j in after["jobs"]] == [j["jobID"] for j in before["jobs"]]


async def test_no_callback_to_an_address_forbidden_when_it_is_due(
        receiver: Receiver, monkeypatch, caplog) -> None:
    """The worker checks the target again when it sends (a host's address can change
    between submission and the job's end): refused, logged by host only."""
    monkeypatch.setenv("OUTBOUND_ALLOW", "")
    caplog.set_level(logging.WARNING, logger="geocatalog.jobs")
    notifier = Notifier()
    notifier.send("job-1", {"successUri": f"{receiver.url}/hush?token=abc"}, "successUri",
                  {"message": "hush"})
    await notifier.drain()
    assert "callback to 127.0.0.1 refused: not an allowed target" in caplog.text
    assert receiver.received == [] and "abc" not in caplog.text


async def test_a_callback_that_keeps_failing_is_logged_with_its_answer(
        receiver: Receiver, caplog) -> None:
    """Its log said "no answer after 3 attempts" to a target that had answered each time."""
    caplog.set_level(logging.WARNING, logger="geocatalog.jobs")
    receiver.failing["/down/success"] = 3
    notifier = Notifier(backoff=0.01)
    notifier.send("job-1", {"successUri": f"{receiver.url}/down/success"}, "successUri",
                  {"message": "hush"})
    await notifier.drain()
    assert receiver.paths() == ["/down/success"] * 3
    assert "callback to 127.0.0.1: answered 500 after 3 attempts" in caplog.text


async def test_a_subscriber_must_be_http_urls(alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "echo", {}, subscriber={"successUri": "file:///etc/passwd"})
    assert r.status_code == 400
    assert r.json()["type"].endswith("/invalid-input")
    assert r.json()["detail"] == "subscriber.successUri: an http(s) URL"


async def test_a_subscriber_url_with_a_password_is_refused(alice_processes: httpx.AsyncClient,
                                                           receiver: Receiver) -> None:
    """It was kept in the job's record (which its project reads) and sent as Basic auth:
    a 400 that does not repeat it, and no job."""
    before = (await alice_processes.get("/processes/jobs", params={"limit": 1000})).json()
    url = receiver.url.replace("://", "://hook:s3cret@") + "/x"
    r = await execute(alice_processes, "echo", {"message": "hush"},
                      subscriber={"successUri": url})
    assert (r.status_code, r.json()["detail"]) == (400, (
        "subscriber.successUri: the URL holds a user name or password, which the service "
        "never sends nor keeps in a job's record: give a URL that needs none")), r.text
    assert "s3cret" not in r.text
    after = (await alice_processes.get("/processes/jobs", params={"limit": 1000})).json()
    assert [j["jobID"] for j in after["jobs"]] == [j["jobID"] for j in before["jobs"]]


class Silent:
    """A TCP server that accepts and never answers; counts connections open at once.

    One thread watches every socket: what a round of `select` finds closed is counted out
    before what it finds new is counted in (a client that gives up closes before it opens
    the next connection; threads of their own each let a close be counted late, and the
    count read one connection too many)."""

    def __init__(self) -> None:
        self.open = self.most = self.total = 0
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        watched = selectors.DefaultSelector()
        watched.register(self.listener, selectors.EVENT_READ)
        while True:
            try:
                ready = watched.select()
            except (OSError, ValueError):  # the listener closed
                return
            # closes first, then new connections
            for key, _ in sorted(ready, key=lambda event: event[0].fileobj is self.listener):
                if key.fileobj is self.listener:
                    try:
                        conn, _ = self.listener.accept()
                    except OSError:
                        return
                    watched.register(conn, selectors.EVENT_READ)
                    with self.lock:
                        self.open += 1
                        self.total += 1
                        self.most = max(self.most, self.open)
                    continue
                conn = key.fileobj
                assert isinstance(conn, socket.socket)
                try:
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                if not data:  # the client gave up and closed
                    watched.unregister(conn)
                    conn.close()
                    with self.lock:
                        self.open -= 1


@pytest.mark.slow
async def test_callbacks_to_a_silent_target_are_bounded(service_app, issuer) -> None:
    """500 jobs whose callbacks went to a target that never answers opened ~430
    connections at once: a worker holds at most CALLBACKS_IN_FLIGHT, and none once they
    are given up."""
    silent = Silent()
    queue = f"test-{uuid.uuid4().hex[:8]}"
    async with service_app(job_queue=queue, in_process_worker=True, worker_concurrency=4,
                           callbacks_in_flight=3, callback_timeout_seconds=0.2) as service:
        c = service.client(issuer.token("alice", client=PROCESS_CLIENT))
        jobs = [(await execute(c, "echo", {"message": str(n)}, subscriber={
            "successUri": f"{silent.url}/{n}"})).headers["Location"] for n in range(20)]
        for url in jobs:
            assert (await wait_for(c, url, "successful"))["status"] == "successful"
        assert await until(lambda: silent.total >= 60 and silent.open == 0, seconds=120)
    silent.listener.close()
    assert silent.most <= 3 and silent.total == 60  # 20 callbacks, 3 attempts each
