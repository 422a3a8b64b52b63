"""Ending a background task for sure; a blocking call in a thread of its own."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


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


def in_thread(function: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """`function(*args)` in a thread of its own, its outcome a future of the running loop:
    unlike `asyncio.to_thread`, a call that may block for long (a stalled download) holds
    none of the loop's shared threads, and the caller may stop waiting for it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def run() -> None:
        try:
            result = function(*args)
        except BaseException as e:  # handed to the waiting loop
            error = e
            outcome = lambda: future.set_exception(error)  # noqa: E731
        else:
            outcome = lambda: future.set_result(result)  # noqa: E731
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=run, name=f"in_thread:{function.__name__}", daemon=True).start()
    return future
