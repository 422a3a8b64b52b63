"""Group commit for POSTs of single items: items posted to one collection while a write to it
is in flight are written together by the next one, in one statement and one transaction.

pgstac's `create_items` writes 8 items in about the database time `create_item` takes for
3 (a staging table, a partition check and a commit per call), so under concurrent posts
the database does less per item; a lone post is written at once, as before (no timer).

Each request still gets its own answer: when a write of several items is refused (an id
that exists, two posts of one id), each of them is written alone. A batch is one
transaction: its items are all written or none is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from stac_fastapi.types.errors import StacApiError

#: Writes `items` into a collection in one transaction: the number written (0: no such
#: collection).
Write = Callable[[str, list[dict[str, Any]]], Awaitable[int]]

#: What a write raises when the database refuses an item (not when it is away): the items
#: are then written one by one, each for its own answer.
REFUSALS = (StacApiError, asyncpg.PostgresError)

_Pending = tuple[dict[str, Any], "asyncio.Future[int]"]


class ItemBatches:
    """Up to `writers` writes in flight per collection, each of up to `max_items` items."""

    def __init__(self, writers: int = 2, max_items: int = 32) -> None:
        self.writers = writers
        self.max_items = max_items
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[str, list[_Pending]] = {}
        self._running: dict[str, set[asyncio.Task[None]]] = {}

    async def create(self, collection_id: str, item: dict[str, Any], write: Write) -> int:
        """Write `item` (with whatever else is waiting): the number `write` returned."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (a restarted app): nothing carries over
            self._loop, self._pending, self._running = loop, {}, {}
        future: asyncio.Future[int] = loop.create_future()
        self._pending.setdefault(collection_id, []).append((item, future))
        running = self._running.setdefault(collection_id, set())
        if len(running) < self.writers:
            task = loop.create_task(self._drain(collection_id, write))
            running.add(task)
            task.add_done_callback(running.discard)
        return await future

    async def _drain(self, collection_id: str, write: Write) -> None:
        while pending := self._pending.pop(collection_id, None):
            batch, rest = pending[:self.max_items], pending[self.max_items:]
            if rest:
                self._pending[collection_id] = rest
            # a request that gave up (client gone) before its write began: not written
            batch = [(item, future) for item, future in batch if not future.done()]
            if batch:
                await self._write(collection_id, batch, write)

    @staticmethod
    async def _write(collection_id: str, batch: list[_Pending], write: Write) -> None:
        try:
            written = await write(collection_id, [item for item, _ in batch])
        except REFUSALS as refusal:
            if len(batch) == 1:
                _settle(batch[0][1], error=refusal)
                return
            for item, future in batch:  # which one was refused: each alone
                try:
                    _settle(future, await write(collection_id, [item]))
                except Exception as e:
                    _settle(future, error=e)
            return
        except BaseException as e:  # the database away, or this task cancelled: all hear it
            for _, future in batch:
                _settle(future, error=e)
            if not isinstance(e, Exception):
                raise
        for _, future in batch:
            _settle(future, written)


def _settle(future: asyncio.Future[int], result: int = 0,
            error: BaseException | None = None) -> None:
    if future.done():  # its request was cancelled meanwhile
        return
    if isinstance(error, asyncio.CancelledError):
        future.cancel()
    elif error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
