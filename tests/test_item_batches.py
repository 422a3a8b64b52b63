"""Single-item POSTs that arrive together are written together (`item_batches`), and each
request still gets its own answer."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from stac_fastapi.types.errors import ConflictError

from stac_ext.data_api.item_batches import ItemBatches
from tests.support.stac import make_item, unique


class Recorder:
    """A write that records each call's ids; the first call stays in flight until
    `release` is set; an id starting with `taken` is refused as a real write refuses it."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.release = asyncio.Event()

    async def __call__(self, collection_id: str, items: list[dict[str, Any]]) -> int:
        self.calls.append([item["id"] for item in items])
        if len(self.calls) == 1:
            await self.release.wait()
        if any(item["id"].startswith("taken") for item in items):
            raise ConflictError(f"Item {items[0]['id']} already exists")
        return 1


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0)


async def test_posts_that_wait_are_written_in_one_write() -> None:
    write, batches = Recorder(), ItemBatches(writers=1)
    first = asyncio.create_task(batches.create("c", {"id": "a"}, write))
    await _until(lambda: write.calls)  # a lone post is written at once
    waiting = [asyncio.create_task(batches.create("c", {"id": i}, write)) for i in "bcd"]
    await asyncio.sleep(0)
    write.release.set()
    assert await asyncio.gather(first, *waiting) == [1, 1, 1, 1]
    assert write.calls == [["a"], ["b", "c", "d"]]


async def test_a_refused_write_is_retried_item_by_item() -> None:
    """One refused item: the others are written, it alone hears the refusal."""
    write, batches = Recorder(), ItemBatches(writers=1)
    first = asyncio.create_task(batches.create("c", {"id": "a"}, write))
    await _until(lambda: write.calls)
    waiting = [asyncio.create_task(batches.create("c", {"id": i}, write))
               for i in ("b", "taken-1", "d")]
    await asyncio.sleep(0)
    write.release.set()
    answers = await asyncio.gather(first, *waiting, return_exceptions=True)
    assert answers[:2] == [1, 1] and answers[3] == 1
    assert isinstance(answers[2], ConflictError)
    assert str(answers[2]) == "Item taken-1 already exists"
    assert write.calls == [["a"], ["b", "taken-1", "d"], ["b"], ["taken-1"], ["d"]]


async def test_a_post_given_up_before_its_write_is_not_written() -> None:
    write, batches = Recorder(), ItemBatches(writers=1)
    first = asyncio.create_task(batches.create("c", {"id": "a"}, write))
    await _until(lambda: write.calls)
    gone = asyncio.create_task(batches.create("c", {"id": "gone"}, write))
    kept = asyncio.create_task(batches.create("c", {"id": "kept"}, write))
    await asyncio.sleep(0)
    gone.cancel()
    write.release.set()
    assert (await first, await kept) == (1, 1)
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert write.calls == [["a"], ["kept"]]


async def test_concurrent_posts_each_get_their_own_answer(
        alice_data: httpx.AsyncClient, bob_data: httpx.AsyncClient, collection: str) -> None:
    """Through the API on the real database: new ids, an id that exists and one id posted
    twice, all at once."""
    url = f"/data/collections/{collection}/items"
    taken, twice = unique("taken-"), unique("twice-")
    assert (await bob_data.post(url, json=make_item(taken))).status_code == 201
    fresh = [unique(f"fresh{n}-") for n in range(12)]
    posts = [(alice_data, i) for i in fresh] + [
        (alice_data, taken), (alice_data, twice), (bob_data, twice)]
    answers = await asyncio.gather(*(client.post(url, json=make_item(item_id))
                                     for client, item_id in posts))

    assert [a.status_code for a in answers[:12]] == [201] * 12
    assert [a.json()["id"] for a in answers[:12]] == fresh
    assert (answers[12].status_code, answers[12].json()["code"]) == (409, "ConflictError")
    assert sorted(a.status_code for a in answers[13:]) == [201, 409]
    winner = "alice" if answers[13].status_code == 201 else "bob"
    stored = (await alice_data.post("/data/search", json={
        "collections": [collection], "ids": [*fresh, taken, twice], "limit": 100})).json()
    assert sorted((f["id"], f["properties"]["owner"]) for f in stored["features"]) == sorted(
        [(i, "alice") for i in fresh] + [(taken, "bob"), (twice, winner)])
