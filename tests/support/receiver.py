"""A webhook receiver on loopback: a real HTTP server (a thread of the test) that keeps
every POST it is sent and answers with the status the test sets, and its events read back
with the ecosystem's own libraries (CloudEvents' SDK, Standard Webhooks' verifier)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cloudevents.core.bindings.http import HTTPMessage, from_http_event
from standardwebhooks.webhooks import Webhook


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int  # what the receiver answered

    def event(self) -> Any:
        """The CloudEvent, as CloudEvents' SDK reads it."""
        return from_http_event(HTTPMessage(headers=self.headers, body=self.body))

    def verified(self, secret: str) -> Any:
        """The body, once Standard Webhooks' verifier accepts its signature (raises if not)."""
        return Webhook(secret).verify(self.body, self.headers)


class Receiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        #: the status answered to each POST (a function of the path may decide instead)
        self.status: int | Callable[[str], int] = 200
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size)
                status = receiver.status(self.path) if callable(receiver.status) \
                    else receiver.status
                if len(body) < size:  # its sender died mid-message (kill -9): refused
                    status = 400
                with receiver._lock:
                    receiver.received.append(Received(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                        status))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def accepted(self, path: str | None = None) -> list[Received]:
        """What it acknowledged (2xx), in the order received."""
        with self._lock:
            return [r for r in self.received if 200 <= r.status < 300
                    and (path is None or r.path == path)]

    async def wait_for(self, count: int, path: str | None = None, seconds: float = 60
                       ) -> list[Received]:
        """Once it has acknowledged `count` messages (or `seconds` passed): those. (It
        waits without holding the event loop: the service may run in the test's.)"""
        deadline = time.monotonic() + seconds
        while len(found := self.accepted(path)) < count and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return found


@contextmanager
def receiving() -> Iterator[Receiver]:
    receiver = Receiver()
    thread = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()
