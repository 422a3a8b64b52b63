"""Background tasks end when their app stops, even when a cancellation is lost (Python
3.11's `asyncio.wait_for` loses one that arrives as what it waits for completes, and
psycopg_pool waits with it: the sampling task of a test's app once ran on, and the test's
shutdown waited for it forever)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from process_api.jobs.tasks import cancelled
from stac_ext.platform.telemetry.readings import Readings, sampling

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit


async def _loses_one_cancellation(ended: list[str]) -> None:
    with contextlib.suppress(asyncio.CancelledError):  # lost, as wait_for may: it goes on
        await asyncio.sleep(3600)
    try:
        await asyncio.sleep(3600)
    finally:
        ended.append("ended")


async def test_a_task_that_lost_a_cancellation_is_cancelled_again() -> None:
    ended: list[str] = []
    task = asyncio.create_task(_loses_one_cancellation(ended))
    await asyncio.sleep(0)
    await cancelled(task, again_after=0.05)
    assert (task.cancelled(), ended) == (True, ["ended"])


async def test_sampling_ends_when_its_reading_loses_the_cancellation() -> None:
    reads: list[str] = []

    async def read() -> None:  # a database reading during which the cancel is lost
        reads.append("read")
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(3600)

    readings = Readings(database=[read])
    async with sampling(readings, every=0.05):
        while not reads:
            await asyncio.sleep(0.01)
    assert readings.stopping and reads == ["read"]
