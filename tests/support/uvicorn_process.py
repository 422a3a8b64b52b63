"""A real server process on loopback (uvicorn, or a program of its own), for the tests
and the benchmarks."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx


@contextmanager
def server_process(command: list[str], port: int, env: dict[str, str], ready_path: str,
                   timeout: float = 60, **popen: object) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command`; yields once `ready_path` answers 200 on `port`, stops it after."""
    process = subprocess.Popen(command, env=env, **popen)  # type: ignore[call-overload]
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited with {process.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}{ready_path}", timeout=2).status_code \
                        == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} did not answer within {timeout} s")
            time.sleep(0.1)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def uvicorn_process(factory: str, port: int, env: dict[str, str], ready_path: str,
                    *options: str, timeout: float = 60, **popen: object
                    ) -> Iterator[subprocess.Popen[bytes]]:
    """Serve the app `factory` makes; yields once `ready_path` answers 200, stops it after."""
    with server_process(
            [sys.executable, "-m", "uvicorn", "--factory", factory, "--host", "127.0.0.1",
             "--port", str(port), "--log-level", "warning", *options], port, env, ready_path,
            timeout, **popen) as process:
        yield process
