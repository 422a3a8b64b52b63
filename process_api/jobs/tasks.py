"""Ending a background task for sure."""

from __future__ import annotations

import asyncio
import contextlib


async def cancelled(task: asyncio.Task[object], again_after: float = 1.0) -> None:
    """Cancel `task` and wait for its end, cancelling it again each `again_after` seconds
    it runs on: before Python 3.12, `asyncio.wait_for` loses a cancellation that arrives as
    what it waits for completes (CPython gh-86296), and psycopg_pool waits with it, so one
    cancel of a loop that takes connections may be lost and the loop run forever."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=again_after)
    with contextlib.suppress(asyncio.CancelledError):
        await task
