"""A real uvicorn process on loopback, for the tests and the benchmarks."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx


@contextmanager
def uvicorn_process(factory: str, port: int, env: dict[str, str], ready_path: str,
                    *options: str, timeout: float = 60) -> Iterator[subprocess.Popen[bytes]]:
    """Serve the app `factory` makes; yields once `ready_path` answers 200, stops it after."""
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", factory, "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning", *options], env=env)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"uvicorn ({factory}) exited with {process.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}{ready_path}", timeout=2).status_code \
                        == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn ({factory}) did not answer within {timeout} s")
            time.sleep(0.1)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
