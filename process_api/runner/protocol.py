"""A job's process's side of its protocol stream (`forkserver`): one line-writer shared by
the job (progress, result) and the relay of its output, which turns what the process and
what it starts write to stdout and stderr into `{"log": text}` lines, a line at a time."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

#: A line longer than this is relayed in pieces.
LINE_BYTES = 16384
#: The longest line the worker reads: a job's results are one line, at most this long.
MAX_LINE_BYTES = 2**26
#: How long the end of a job waits for the last of its output (a process it started and
#: left running may hold the pipe open).
DRAIN_SECONDS = 1.0


class Protocol:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        self.send_encoded(json.dumps(message))

    def send_file(self, number: int, fd: int, size: int) -> None:
        """A file's bytes: a line `{"file": number, "size": size}`, then exactly `size`
        bytes (read from `fd`), which the worker reads as they come."""
        with self._lock:
            self._stream.write(json.dumps({"file": number, "size": size}) + "\n")
            self._stream.flush()
            raw = self._stream.buffer  # a socket's file: bytes under the text
            left = size
            while left:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:  # shrunk while sent: the rest as zeros, the worker's count kept
                    chunk = bytes(min(left, 1 << 20))
                raw.write(chunk)
                left -= len(chunk)
            raw.flush()

    def send_encoded(self, message: str) -> None:
        """A message already encoded as JSON, on one line."""
        line = message + "\n"
        with self._lock:
            self._stream.write(line)
            self._stream.flush()


def _relay(fd: int, protocol: Protocol) -> None:
    """Whole lines as they come (a secret on one line is scrubbed whole by the worker)."""
    pending = b""
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while chunk := pipe.read(65536):
            pending += chunk
            cut = pending.rfind(b"\n") + 1 or (len(pending) if len(pending) >= LINE_BYTES
                                               else 0)
            if cut:
                protocol.send({"log": pending[:cut].decode(errors="replace")})
                pending = pending[cut:]
    if pending:
        protocol.send({"log": pending.decode(errors="replace")})


async def readable(sock: socket.socket) -> None:
    """Until `sock` has something to read (or its peer closed it): the worker's side."""
    import asyncio  # here: a job's process never imports it for this module

    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def seen() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(sock.fileno(), seen)
    try:
        await ready
    finally:
        loop.remove_reader(sock.fileno())


def output_to(fd: int) -> None:
    """The process's file descriptors 1 and 2 (inherited by what it starts) made copies of
    `fd`, what Python holds for them written first."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)


def output_piped() -> int:
    """The process's file descriptors 1 and 2 made a new pipe's: its read end."""
    read_end, write_end = os.pipe()
    output_to(write_end)
    os.close(write_end)
    return read_end


@contextmanager
def relayed_output(protocol: Protocol) -> Iterator[None]:
    """The process's file descriptors 1 and 2 (inherited by what it starts) relayed as
    `log` lines until the block ends."""
    read_end = output_piped()
    relay = threading.Thread(target=_relay, args=(read_end, protocol), daemon=True)
    relay.start()
    try:
        yield
    finally:
        quiet = os.open(os.devnull, os.O_WRONLY)
        output_to(quiet)
        os.close(quiet)
        relay.join(DRAIN_SECONDS)
