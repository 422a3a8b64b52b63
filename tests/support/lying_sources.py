"""Data sources on loopback that lie and trickle, as an attacker's would: an HTTP server
whose paths name what they do, one of which answers as an S3 endpoint; each records how
many bytes it sent and when it stopped sending."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.http import free_port

#: What a lying source sends at most (far more than any test's staging limit).
FLOOD_BYTES = 64 * 2**20
_CHUNK = b"x" * (64 * 2**10)

#: The paths and what each does (`<name>` is any file name):
#: `/unannounced/<name>`: no Content-Length, a chunked body of FLOOD_BYTES;
#: `/understated/<name>`: HEAD says 10 bytes, GET sends a chunked body of FLOOD_BYTES;
#: `/trickle/<name>`: 1000 bytes announced, one byte a second;
#: `/stall/<name>`: 1000 bytes announced, 10 sent, then nothing;
#: `/page/<name>`: an HTML page (what a browser's address bar shows);
#: `/status/<code>/<name>`: that HTTP status, to HEAD and GET;
#: `/lying/<key>`: an S3 bucket `lying` (path-style): HeadObject says 10 bytes, GetObject
#: sends a chunked body of FLOOD_BYTES.


@dataclass
class Sent:
    """One answer's body: the bytes that left, and when it stopped (a client gone, or the
    body's end)."""

    path: str
    bytes: int = 0
    ended: float | None = None


@dataclass
class LyingSources:
    base: str
    sent: list[Sent] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    def sent_to(self, path: str) -> list[Sent]:
        return [s for s in self.sent if s.path == path]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        kind = self.path.split("/")[1]
        if kind == "status":
            self.send_error(int(self.path.split("/")[2]))
            return
        self.send_response(200)
        if kind in ("understated", "lying"):
            self.send_header("Content-Length", "10")
        elif kind in ("trickle", "stall"):
            self.send_header("Content-Length", "1000")
        elif kind == "page":
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(_PAGE)))
        self.send_header("ETag", '"lie"')
        self.send_header("Last-Modified", "Sat, 05 Dec 2026 00:00:00 GMT")
        self.end_headers()

    def do_GET(self) -> None:
        kind = self.path.split("/")[1]
        record = Sent(self.path)
        self.server.sources.sent.append(record)
        try:
            if kind in ("unannounced", "understated", "lying"):
                self._flood(record)
            elif kind == "trickle":
                self._announced(1000)
                for _ in range(1000):
                    self._write(record, b"x")
                    time.sleep(1)
            elif kind == "stall":
                self._announced(1000)
                self._write(record, b"x" * 10)
                while not self.server.stopping.wait(1):
                    pass
            elif kind == "status":
                self.send_error(int(self.path.split("/")[2]))
            elif kind == "page":
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(_PAGE)))
                self.end_headers()
                self._write(record, _PAGE)
            else:
                self.send_error(404)
        except OSError:  # the client went
            pass
        finally:
            record.ended = time.time()

    def _announced(self, size: int) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()

    def _flood(self, record: Sent) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("ETag", '"lie"')
        self.end_headers()
        while record.bytes < FLOOD_BYTES and not self.server.stopping.is_set():
            self.wfile.write(f"{len(_CHUNK):x}\r\n".encode() + _CHUNK + b"\r\n")
            record.bytes += len(_CHUNK)
        self.wfile.write(b"0\r\n\r\n")

    def _write(self, record: Sent, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()
        record.bytes += len(data)


_PAGE = (b"<!DOCTYPE html>\n<html><head><title>STAC Browser</title></head>"
         b"<body><div id=\"stac-browser\"></div></body></html>\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, sources: LyingSources) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.sources = sources
        self.stopping = threading.Event()


@contextmanager
def lying_sources() -> Iterator[LyingSources]:
    port = free_port()
    sources = LyingSources(f"http://127.0.0.1:{port}")
    server = _Server(port, sources)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield sources
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
