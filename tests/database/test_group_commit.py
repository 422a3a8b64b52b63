"""Writes that arrive together are written together
(`stac_ext.platform.database.group_commit`): single item POSTs and job submissions; each
request still gets its own answer."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg
import pytest
from stac_fastapi.types.errors import ConflictError

from stac_ext.platform.database.group_commit import GroupCommit
from tests.support.jobs import execute, until
from tests.support.stac import make_item, unique


class Recorder:
    """A write that records each call's ids and answers each entry's id upper-cased; the
    first call stays in flight until `release` is set; an id starting with `taken` is
    refused as a real write refuses it."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.release = asyncio.Event()

    async def __call__(self, items: list[dict[str, Any]]) -> list[str]:
        self.calls.append([item["id"] for item in items])
        if len(self.calls) == 1:
            await self.release.wait()
        if len(items) == 1 and items[0]["id"].startswith("cancel"):
            raise asyncio.CancelledError  # as when the writer's task is cancelled
        if any(item["id"].startswith("taken") for item in items):
            raise ConflictError(f"Item {items[0]['id']} already exists")
        return [item["id"].upper() for item in items]


REFUSED = (ConflictError,)


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0)


def _add(group: GroupCommit[dict[str, Any], str], write: Recorder, entry_id: str,
         key: str = "c") -> asyncio.Task[str]:
    return asyncio.create_task(group.add(key, {"id": entry_id}, write))


async def test_entries_that_wait_are_written_in_one_write() -> None:
    write, group = Recorder(), GroupCommit[dict[str, Any], str](REFUSED, writers=1)
    first = _add(group, write, "a")
    await _until(lambda: write.calls)  # a lone entry is written at once
    waiting = [_add(group, write, i) for i in "bcd"]
    other_key = _add(group, write, "x", key="other")  # its own writer: not in the batch
    await asyncio.sleep(0)
    write.release.set()
    assert await asyncio.gather(first, *waiting, other_key) == ["A", "B", "C", "D", "X"]
    assert write.calls == [["a"], ["x"], ["b", "c", "d"]]


async def test_batches_hold_at_most_max_entries() -> None:
    write, group = Recorder(), GroupCommit[dict[str, Any], str](REFUSED, writers=1, max_entries=2)
    first = _add(group, write, "a")
    await _until(lambda: write.calls)
    waiting = [_add(group, write, i) for i in "bcde"]
    await asyncio.sleep(0)
    write.release.set()
    assert await asyncio.gather(first, *waiting) == ["A", "B", "C", "D", "E"]
    assert write.calls == [["a"], ["b", "c"], ["d", "e"]]


async def test_a_refused_write_is_retried_entry_by_entry() -> None:
    """One refused entry: the others are written, it alone hears the refusal."""
    write, group = Recorder(), GroupCommit[dict[str, Any], str](REFUSED, writers=1)
    first = _add(group, write, "a")
    await _until(lambda: write.calls)
    waiting = [_add(group, write, i) for i in ("b", "taken-1", "d")]
    await asyncio.sleep(0)
    write.release.set()
    answers = await asyncio.gather(first, *waiting, return_exceptions=True)
    assert answers[:2] == ["A", "B"] and answers[3] == "D"
    assert isinstance(answers[2], ConflictError)
    assert str(answers[2]) == "Item taken-1 already exists"
    assert write.calls == [["a"], ["b", "taken-1", "d"], ["b"], ["taken-1"], ["d"]]


async def test_an_error_that_is_no_refusal_reaches_every_entry_at_once() -> None:
    """E.g. the database away: no entry-by-entry retry, every waiter hears it."""
    write, group = Recorder(), GroupCommit[dict[str, Any], str](writers=1)  # no refusals
    first = _add(group, write, "a")
    await _until(lambda: write.calls)
    waiting = [_add(group, write, i) for i in ("b", "taken-2")]
    await asyncio.sleep(0)
    write.release.set()
    answers = await asyncio.gather(first, *waiting, return_exceptions=True)
    assert answers[0] == "A"
    assert [type(a) for a in answers[1:]] == [ConflictError, ConflictError]
    assert write.calls == [["a"], ["b", "taken-2"]]


async def test_a_writer_cancelled_amid_retries_leaves_no_entry_waiting() -> None:
    """Entries answered before it keep their answers; the others are cancelled with it."""
    write, group = Recorder(), GroupCommit[dict[str, Any], str](REFUSED, writers=1)
    first = _add(group, write, "a")
    await _until(lambda: write.calls)
    waiting = [_add(group, write, i) for i in ("b", "taken-3", "cancel-me", "d")]
    await asyncio.sleep(0)
    write.release.set()
    answers = await asyncio.gather(first, *waiting, return_exceptions=True)
    assert answers[:2] == ["A", "B"]
    assert [type(a) for a in answers[2:]] == [
        ConflictError, asyncio.CancelledError, asyncio.CancelledError]
    assert write.calls == [["a"], ["b", "taken-3", "cancel-me", "d"], ["b"], ["taken-3"],
                           ["cancel-me"]]


async def test_an_entry_given_up_before_its_write_is_not_written() -> None:
    write, group = Recorder(), GroupCommit[dict[str, Any], str](REFUSED, writers=1)
    first = _add(group, write, "a")
    await _until(lambda: write.calls)
    gone, kept = _add(group, write, "gone"), _add(group, write, "kept")
    await asyncio.sleep(0)
    gone.cancel()
    write.release.set()
    assert (await first, await kept) == ("A", "KEPT")
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert write.calls == [["a"], ["kept"]]


async def test_an_entry_added_as_the_last_writer_ends_is_written() -> None:
    """An entry that comes after the only writer found nothing left, but before the loop
    has run that writer's done callbacks, gets a writer of its own."""
    group = GroupCommit[dict[str, Any], str](REFUSED, writers=1)
    arrived = asyncio.get_running_loop().create_future()

    async def write(items: list[dict[str, Any]]) -> list[str]:
        if not arrived.done():  # wakes `late` in the writer's last step, ahead of its end
            arrived.set_result(None)
        return [item["id"].upper() for item in items]

    async def late() -> str:
        await arrived  # woken ahead of the writer's done callbacks, which its end queues
        return await group.add("c", {"id": "b"}, write)

    second = asyncio.create_task(late())
    assert await group.add("c", {"id": "a"}, write) == "A"
    for _ in range(10):  # every step this write takes, with room to spare
        await asyncio.sleep(0)
    assert second.done() and second.result() == "B"


async def test_entries_waiting_for_a_cancelled_writer_hear_it() -> None:
    write, group = Recorder(), GroupCommit[dict[str, Any], str](REFUSED, writers=1)
    first = _add(group, write, "a")
    await _until(lambda: write.calls)
    waiting = _add(group, write, "b")
    await asyncio.sleep(0)
    next(iter(group._running["c"])).cancel()
    for _ in range(10):  # every step the cancellation takes, with room to spare
        await asyncio.sleep(0)
    assert first.cancelled() and waiting.cancelled()


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


async def _submitted_while_blocked(client: httpx.AsyncClient, database_url: str,
                                   inputs: list[dict[str, Any]]) -> list[httpx.Response]:
    """Submissions at once while the job table is locked: the first write waits on the
    lock, the submissions that arrive meanwhile wait for it in the group commit; then the
    lock goes."""
    with psycopg.connect(database_url) as blocker:
        blocker.execute("LOCK TABLE processes.jobs IN EXCLUSIVE MODE")
        submitted = asyncio.gather(*(execute(client, "echo", i) for i in inputs))
        assert await until(lambda: _blocked_inserts(database_url) > 0)
        await asyncio.sleep(0.5)  # the other requests reach the group commit meanwhile
    return await submitted


def _blocked_inserts(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
                           "'Lock' AND query LIKE '%INSERT INTO processes.jobs%'").fetchone()
    return row[0] if row else 0


def _stored(database_url: str, ids: list[str]) -> list[tuple[str, str, Any]]:
    with psycopg.connect(database_url) as conn:
        return conn.execute("SELECT id::text, inputs->>'message', created FROM processes.jobs "
                            "WHERE id = ANY(%s::uuid[])", (ids,)).fetchall()


async def test_submissions_at_once_are_recorded_together(
        alice_processes: httpx.AsyncClient, database_url: str) -> None:
    """Through the API on the real database: one transaction for those that waited (one
    `created`: the transaction's time), each with its own id and inputs."""
    messages = [unique("together-") for _ in range(12)]
    answers = await _submitted_while_blocked(alice_processes, database_url,
                                             [{"message": m} for m in messages])

    assert [a.status_code for a in answers] == [201] * 12
    ids = [a.json()["jobID"] for a in answers]
    assert len(set(ids)) == 12
    stored = _stored(database_url, ids)
    assert sorted((i, m) for i, m, _ in stored) == sorted(zip(ids, messages, strict=True))
    # at most 3 transactions: the writes that waited on the lock (at most 2, each with the
    # requests there when it began), then one with the requests that came meanwhile
    assert len({created for *_, created in stored}) <= 3


async def test_a_submission_the_database_refuses_fails_alone(
        alice_processes: httpx.AsyncClient, database_url: str) -> None:
    """A NUL character among submissions written together: a 400 for it, 201 for each of
    the others, their records as submitted."""
    messages = [unique("beside-") for _ in range(6)]
    answers = await _submitted_while_blocked(
        alice_processes, database_url,
        [{"message": m} for m in messages[:3]] + [{"message": "a\x00b"}]
        + [{"message": m} for m in messages[3:]])

    assert [a.status_code for a in answers] == [201] * 3 + [400] + [201] * 3
    assert answers[3].json()["type"].endswith("/invalid-input")
    assert "A value cannot be stored" in answers[3].json()["detail"]
    ids = [a.json()["jobID"] for a in answers[:3] + answers[4:]]
    assert sorted((i, m) for i, m, _ in _stored(database_url, ids)) == sorted(
        zip(ids, messages, strict=True))
