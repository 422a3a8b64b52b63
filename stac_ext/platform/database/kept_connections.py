"""Connections the data API's requests keep between them, in front of asyncpg's pool.

Giving a connection back to asyncpg's pool and taking it out again costs a request a task
and two timers, a large part of a single item's CPU (docs/performance.md): the pool shields
each release from cancellation with a task of its own and arms and cancels a timer on
either side. A request that used its connection and left it idle keeps it here instead, for the
next request; the pool still makes, resets, replaces and closes every connection, as each
goes back to it:
- a connection whose request failed or was cancelled, that is closed, or in a transaction
  (the pool resets, rolls back or replaces it);
- while a request waits in the pool for a connection (it gets this one);
- after `uses` reuses (so that the pool's `max_queries` still replaces it);
- when unused for `idle_seconds` (from then on the pool's inactivity timeout counts);
- all of them before the pool closes, and any that comes back after;
- all of them when their server turned read-only (`drop`: a failover).

Imports asyncpg and the standard library.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import NamedTuple

import asyncpg


class _Kept(NamedTuple):
    conn: asyncpg.Connection
    uses: int  # requests it served since it last came out of the pool
    since: float  # loop time it was left idle


class KeptConnections:
    """Idle connections out of `pool`, the most recently used first."""

    def __init__(self, pool: asyncpg.Pool, idle_seconds: float = 1.0,
                 uses: int = 1000) -> None:
        self.pool = pool
        self.idle_seconds = idle_seconds
        self.uses = uses
        #: requests waiting in the pool for a connection
        self.waiting = 0
        self._idle: deque[_Kept] = deque()
        self._sweep: asyncio.TimerHandle | None = None
        self._releases: set[asyncio.Task[None]] = set()
        self._closed = False

    def __len__(self) -> int:
        return len(self._idle)

    def take(self) -> tuple[asyncpg.Connection, int] | None:
        """The connection left idle last, and its uses; None when none is kept."""
        while self._idle:
            kept = self._idle.pop()
            if _open(kept.conn):
                return kept.conn, kept.uses
        return None

    def keep(self, conn: asyncpg.Connection, uses: int) -> bool:
        """Keep `conn`, idle after its request's use; False: it goes back to the pool."""
        if (self.waiting or uses >= self.uses or self._closed or not _open(conn)
                or conn.is_in_transaction()):
            return False
        loop = asyncio.get_running_loop()
        self._idle.append(_Kept(conn, uses, loop.time()))
        if self._sweep is None:
            self._sweep = loop.call_later(self.idle_seconds, self._swept)
        return True

    def _swept(self) -> None:
        """Give back the connections unused for `idle_seconds` (the oldest first)."""
        loop = asyncio.get_running_loop()
        while self._idle and loop.time() - self._idle[0].since >= self.idle_seconds:
            self._give_back(self._idle.popleft().conn)
        self._sweep = None if not self._idle else loop.call_at(
            self._idle[0].since + self.idle_seconds, self._swept)

    def _give_back(self, conn: asyncpg.Connection) -> None:
        task = asyncio.get_running_loop().create_task(self.pool.release(conn))
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    def drop(self) -> None:
        """Give every kept connection back to the pool now (their server is no longer the
        one wanted: the pool replaces them)."""
        while self._idle:
            self._give_back(self._idle.popleft().conn)

    async def close(self) -> None:
        """Give every kept connection back to the pool, and wait until it has them; keep
        none from now on."""
        self._closed = True
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        self.drop()
        await asyncio.gather(*self._releases)


def _open(conn: asyncpg.Connection) -> bool:
    """Whether `conn` can serve a request. One the server or the network closed went back
    to the pool by itself (asyncpg detaches it from its user then)."""
    try:
        return not conn.is_closed()
    except asyncpg.InterfaceError:
        return False
