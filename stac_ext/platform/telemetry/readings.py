"""Gauges of what a process holds (its database pools, its items kept as served) and of
what the database holds (the job queue), sampled every few seconds and when scraped.

Sampled rather than read by a collector at scrape time: with several API processes
(`geocatalog serve --workers N`) a scrape reaches one of them, and the others' readings
reach it only through the files prometheus-client's multi-process mode keeps, which only
written metrics fill. Pool gauges add up over the live processes; the database's are the
same whichever process read them (the latest one counts).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from prometheus_client import Counter, Gauge, multiprocess

logger = logging.getLogger("geocatalog.metrics")

#: pool name -> {"in_use", "idle", "max", "waiting"} -> a number
PoolStates = Mapping[str, Mapping[str, int]]

POOL_CONNECTIONS = Gauge("geocatalog_db_pool_connections", "Connections of a database pool, "
                         "by state (in_use, idle).", ["pool", "state"],
                         multiprocess_mode="livesum")
POOL_MAX = Gauge("geocatalog_db_pool_max_connections", "The most connections a pool opens.",
                 ["pool"], multiprocess_mode="livesum")
POOL_WAITING = Gauge("geocatalog_db_pool_waiting_requests", "Requests waiting for a "
                     "connection of a pool (all of its connections in use).", ["pool"],
                     multiprocess_mode="livesum")
KEPT_HITS = Counter("geocatalog_rendered_items_hits", "Items served from those kept as "
                    "served (rendered once, by their stored text).")
KEPT_MISSES = Counter("geocatalog_rendered_items_misses", "Items rendered because none was "
                      "kept for their stored text.")
KEPT_BYTES = Gauge("geocatalog_rendered_items_bytes", "Bytes of items kept as served.",
                   multiprocess_mode="livesum")
KEPT_ENTRIES = Gauge("geocatalog_rendered_items", "Items kept as served.",
                     multiprocess_mode="livesum")


@dataclass
class Readings:
    """What a process reads into its gauges: `pools()` (the data API's and the job engine's),
    `kept()` (the items kept as served: hits, misses, bytes, entries), `database()` (the job
    queue's state, read by a query)."""

    pools: list[Callable[[], PoolStates]] = field(default_factory=list)
    kept: Callable[[], Mapping[str, int]] | None = None
    database: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    _counted: dict[str, int] = field(default_factory=lambda: {"hits": 0, "misses": 0})
    stopping: bool = False  # `run` ends at its next round (`sampling` sets it)

    def sample(self) -> None:
        """The process's own readings (no I/O)."""
        for states in self.pools:
            for pool, state in states().items():
                for name in ("in_use", "idle"):
                    POOL_CONNECTIONS.labels(pool, name).set(state[name])
                POOL_MAX.labels(pool).set(state["max"])
                POOL_WAITING.labels(pool).set(state["waiting"])
        if self.kept is not None:
            kept = self.kept()
            # counters of the process's own: what it counted since the last sample
            KEPT_HITS.inc(kept["hits"] - self._counted["hits"])
            KEPT_MISSES.inc(kept["misses"] - self._counted["misses"])
            self._counted.update(hits=kept["hits"], misses=kept["misses"])
            KEPT_BYTES.set(kept["bytes"])
            KEPT_ENTRIES.set(kept["entries"])

    async def sample_database(self) -> None:
        """The database's readings (each sets gauges of its own)."""
        for read in self.database:
            await read()

    async def run(self, every: float) -> None:
        """Sample every `every` seconds until stopped (`stopping`) or cancelled (a failed
        database reading is logged and tried again next time: the database may be away).
        The flag as well: a cancellation arriving as a pool hands over a connection can be
        lost in Python 3.11's `asyncio.wait_for`, which psycopg_pool waits with."""
        while not self.stopping:
            self.sample()
            try:
                await self.sample_database()
            except Exception as e:  # reported, then read again next time
                logger.warning("metrics: the job queue could not be read (%s)",
                               type(e).__name__)
            await asyncio.sleep(every)


@asynccontextmanager
async def sampling(readings: Readings, every: float) -> AsyncIterator[None]:
    """`readings` sampled every `every` seconds while within; at the end, this process's
    live gauges leave the sums of multi-process mode."""
    readings.stopping = False
    task = asyncio.create_task(readings.run(every))
    try:
        yield
    finally:
        readings.stopping = True
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            multiprocess.mark_process_dead(os.getpid())
