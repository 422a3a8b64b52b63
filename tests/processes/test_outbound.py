"""Processes fetch only from allowed targets: public addresses after DNS resolution, plus
the networks OUTBOUND_ALLOW names; no redirects; one text for every refusal."""

from __future__ import annotations

import io
import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import fsspec
import pytest
from botocore.exceptions import EndpointConnectionError

from process_api.data.staging import storage_failure
from process_api.processes.outbound import REFUSED, OutboundPolicy, TargetRefused
from process_api.processes.s3_manifest import manifest, s3_filesystem
from process_api.runner.child import Context
from stac_ext.publish.run import list_files
from stac_ext.publish.writer import PublishError

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit

DEFAULT = OutboundPolicy()


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8080/data", "https://localhost/x.nc", "http://10.1.2.3/x",
    "http://192.168.0.1/x", "http://169.254.169.254/latest/meta-data/", "http://[::1]/x",
    "http://[::ffff:127.0.0.1]/x", "http://0.0.0.0/x", "ftp://example.org/x", "file:///etc/x",
    "http://no-such-host.invalid/x", "https://[\xccU", "http://example.org:99999/x"])
def test_refused_by_default(url: str) -> None:
    with pytest.raises(TargetRefused) as refused:
        DEFAULT.check(url)
    assert str(refused.value) == REFUSED  # the same words whatever the reason


def test_public_addresses_and_allowed_networks() -> None:
    DEFAULT.check("https://93.184.216.34/data.nc")  # a public address: no lookup needed
    allowing = OutboundPolicy((ipaddress.ip_network("127.0.0.0/8"),))
    allowing.check("http://127.0.0.1:9000")
    with pytest.raises(TargetRefused):
        allowing.check("http://10.0.0.1:9000")


def test_policy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OUTBOUND_ALLOW", "10.0.0.0/8, 127.0.0.1")
    assert OutboundPolicy.from_env().allowed == (ipaddress.ip_network("10.0.0.0/8"),
                                                 ipaddress.ip_network("127.0.0.1/32"))


@pytest.fixture
def redirecting() -> Iterator[tuple[str, list[str]]]:
    """A loopback server redirecting every request to a second one, which counts what
    reaches it: (the first's URL, the second's hits)."""
    hits: list[str] = []

    class Target(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        do_HEAD = do_GET

        def log_message(self, *args: object) -> None:
            return None

    target = ThreadingHTTPServer(("127.0.0.1", 0), Target)

    class Redirect(Target):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{target.server_port}/inside")
            self.end_headers()

        do_HEAD = do_GET

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    for each in (target, server):
        threading.Thread(target=each.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", hits
    server.shutdown()
    target.shutdown()


def test_publishing_refuses_loopback_and_private_sources(
        monkeypatch: pytest.MonkeyPatch, redirecting: tuple[str, list[str]]) -> None:
    monkeypatch.delenv("OUTBOUND_ALLOW")
    for inputs in ({"source": f"{redirecting[0]}/x.nc"},
                   {"source": "s3://bucket/x", "s3": {"endpoint": "http://10.0.0.5:9000"}}):
        with pytest.raises(PublishError) as refused:
            list_files(inputs["source"], inputs.get("s3") or {})  # type: ignore[arg-type]
        assert str(refused.value) == REFUSED


def test_redirects_are_not_followed(redirecting: tuple[str, list[str]]) -> None:
    url, hits = redirecting
    fs, paths = list_files(f"{url}/x.nc", {})  # loopback is allowed in the tests
    assert fs.cat(paths[0]) == b""  # the redirect itself, not what it points at
    assert hits == []


@pytest.fixture
def redirecting_elsewhere() -> Iterator[tuple[str, list[str]]]:
    """An allowed address (127.0.0.1) redirecting every request to a blocked one
    (127.0.0.2), which records what reaches it."""
    hits: list[str] = []

    class Inside(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "6")
            self.end_headers()
            self.wfile.write(b"secret")

        do_HEAD = do_GET

        def log_message(self, *args: object) -> None:
            return None

    inside = ThreadingHTTPServer(("127.0.0.2", 0), Inside)

    class Redirect(Inside):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.2:{inside.server_port}"
                                         f"{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_HEAD = do_GET

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    for each in (inside, server):
        threading.Thread(target=each.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", hits
    server.shutdown()
    inside.shutdown()


@pytest.mark.slow
def test_s3_redirects_cannot_reach_a_blocked_address(
        monkeypatch: pytest.MonkeyPatch, redirecting_elsewhere: tuple[str, list[str]]) -> None:
    """An allowed S3 endpoint answering 302 to an internal address made the worker fetch
    it (and the manifest carried the reply's size and sha256): every connection of the S3
    client is checked, so the hop fails and nothing reaches the blocked address."""
    monkeypatch.setenv("OUTBOUND_ALLOW", "127.0.0.1/32")
    endpoint, hits = redirecting_elsewhere
    inputs = {"source": "s3://bucket/prefix", "s3": {
        "accessKeyId": "a", "secretAccessKey": "b", "endpoint": endpoint}}
    with pytest.raises(EndpointConnectionError):
        manifest(inputs, Context(io.StringIO(), {}))
    with pytest.raises(PublishError, match="Cannot reach the object storage"):
        list_files("s3://bucket/prefix", inputs["s3"])
    fs = s3_filesystem(inputs["s3"])  # zarr re-creates the filesystem from its JSON form
    again = fsspec.AbstractFileSystem.from_json(fs.to_json())
    with pytest.raises(EndpointConnectionError):
        again.cat("bucket/x")
    assert hits == []


@pytest.mark.parametrize(("error", "failure"), [
    (EndpointConnectionError(endpoint_url="http://127.0.0.1:40312/bucket"), "unreachable"),
    (EndpointConnectionError(endpoint_url="http://127.0.0.1:34041/bucket"), "unreachable"),
    (OSError("An error occurred (403) when calling the HeadObject operation: Forbidden"),
     "refused"),
    (OSError("An error occurred (404) when calling the HeadObject operation"), "missing"),
])
def test_a_storage_failure_is_named_by_its_status_not_by_a_port(error: Exception,
                                                                 failure: str) -> None:
    """An endpoint whose port holds 403 (it happened: 127.0.0.1:40312) is not a refusal."""
    assert storage_failure(error) == failure
