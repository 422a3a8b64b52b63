"""Jobs for tests: execute a process, wait (bounded) for a job to reach a status, or for
anything a job does elsewhere (a callback received, a process gone)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx


async def execute(client: httpx.AsyncClient, process: str, inputs: dict[str, Any],
                  headers: dict[str, str] | None = None, **body: Any) -> httpx.Response:
    return await client.post(f"/processes/processes/{process}/execution",
                             json={"processInputs": inputs, **body}, headers=headers)


async def wait_for(client: httpx.AsyncClient, url: str, *statuses: str,
                   seconds: float = 60) -> dict:
    """Poll a job until it reaches one of `statuses` (bounded; not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while True:
        job = (await client.get(url)).json()
        if job["status"] in statuses or time.monotonic() > deadline:
            return job
        await asyncio.sleep(0.1)


async def until(condition: Callable[[], object], seconds: float = 30) -> bool:
    """Poll `condition` until it holds (bounded; not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def job_ended(client: httpx.Client, url: str, *statuses: str, seconds: float = 120) -> dict:
    """`wait_for` from a synchronous client (a test driving the product as run)."""
    deadline = time.monotonic() + seconds
    while True:
        job = client.get(url).json()
        if job["status"] in (statuses or ("successful", "failed", "dismissed")) or \
                time.monotonic() > deadline:
            return job
        time.sleep(0.1)
