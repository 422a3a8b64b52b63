"""Group commit: writes that arrive while others are in flight are gathered into the next
write, one statement and one transaction for all of them.

Under concurrent requests the database then does one round trip and one commit per batch
instead of per request; a lone request is written at once (no timer). Used for POSTs of
single items (per collection) and for job submissions.

Each request still gets its own answer: when a write of several entries is refused (one of
the `refusals` its owner names: the database answered no), each entry is written alone.
Any other error (the database away, a cancelled writer) reaches every entry of the batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Writes entries in one transaction: one result per entry, in order.
Write = Callable[[list[T]], Awaitable[Sequence[R]]]
Refusals = tuple[type[Exception], ...]


class GroupCommit(Generic[T, R]):
    """Up to `writers` writes in flight per key, each of up to `max_entries` entries."""

    def __init__(self, refusals: Refusals = (), writers: int = 2, max_entries: int = 32
                 ) -> None:
        self.refusals = refusals
        self.writers = writers
        self.max_entries = max_entries
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[Hashable, list[tuple[T, asyncio.Future[R]]]] = {}
        self._running: dict[Hashable, set[asyncio.Task[None]]] = {}

    async def add(self, key: Hashable, entry: T, write: Write[T, R]) -> R:
        """Write `entry` with whatever else waits under `key`: its result. Every call for
        one key passes the same kind of `write` (a writer uses its first caller's)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (a restarted app): nothing carries over
            self._loop, self._pending, self._running = loop, {}, {}
        future: asyncio.Future[R] = loop.create_future()
        self._pending.setdefault(key, []).append((entry, future))
        running = self._running.setdefault(key, set())
        if len(running) < self.writers:
            task = loop.create_task(self._drain(key, write, running))
            running.add(task)
        return await future

    async def _drain(self, key: Hashable, write: Write[T, R],
                     running: set[asyncio.Task[None]]) -> None:
        try:
            while pending := self._pending.pop(key, None):
                batch, rest = pending[:self.max_entries], pending[self.max_entries:]
                if rest:
                    self._pending[key] = rest
                # a request that gave up (client gone) before its write began: not written
                batch = [(entry, future) for entry, future in batch if not future.done()]
                if batch:
                    await _write(batch, write, self.refusals)
        except BaseException as e:  # cancelled: what waits for it hears it too
            for _, future in self._pending.pop(key, []):
                _fail(future, e)
            raise
        finally:
            # counted out in the step that found nothing left, not by a done callback: an
            # entry added between this task's end and its callback would find every writer
            # still counted, start none, and wait for ever
            running.discard(asyncio.current_task())


async def _write(batch: list[tuple[T, asyncio.Future[R]]], write: Write[T, R],
                 refusals: Refusals) -> None:
    try:
        try:
            results = await write([entry for entry, _ in batch])
            for (_, future), result in zip(batch, results, strict=True):
                _resolve(future, result)
        except refusals:
            if len(batch) == 1:
                raise
            for entry, future in batch:  # which one was refused: each alone
                try:
                    _resolve(future, (await write([entry]))[0])
                except Exception as e:
                    _fail(future, e)
    except BaseException as e:  # a refusal of one entry, the database away, or this task
        for _, future in batch:  # cancelled: every entry not yet answered hears it
            _fail(future, e)
        if not isinstance(e, Exception):
            raise


def _resolve(future: asyncio.Future[R], result: R) -> None:
    if not future.done():  # else its request was cancelled meanwhile
        future.set_result(result)


def _fail(future: asyncio.Future[R], error: BaseException) -> None:
    if future.done():
        return
    if isinstance(error, asyncio.CancelledError):
        future.cancel()
    else:
        future.set_exception(error)
