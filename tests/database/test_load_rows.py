"""A load's rows are made by a thread ahead of pypgstac's loader (`load_rows.rows`): the
same rows pypgstac makes, in the same order, their times in UTC in the form the loader
reads its partitions' bounds (so that it asks pgstac to widen none that holds them); a row
it cannot make fails the load with pypgstac's message; a reader that stops early leaves no
thread behind."""

from __future__ import annotations

import threading
from datetime import datetime

import psycopg
import pytest
from pypgstac.db import PgstacDB
from pypgstac.load import Loader

from stac_ext.platform.database import load_rows, load_workers
from tests.support.cluster import loading_database
from tests.support.stac import make_item


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return loading_database(database_url, "load_rows_", ("rows-a", "rows-b"))


def _items(count: int) -> list[dict]:
    items = [make_item(f"i{n}", "rows-a" if n % 3 else "rows-b", x=n % 170, day=n % 28 + 1)
             for n in range(count)]
    items[1]["properties"] = {"datetime": None, "start_datetime": "2021-01-02T00:00:00Z",
                              "end_datetime": "2021-02-02T00:00:00+01:00"}
    return items


def _makers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == load_rows.THREAD_NAME]


def _times(rows: list[dict]) -> list[tuple[str, str]]:
    return [(row.pop("datetime"), row.pop("end_datetime")) for row in rows]


def test_rows_are_pgstacs_in_order_their_times_in_utc(database: str) -> None:
    items = _items(40)
    with PgstacDB(dsn=database) as db:
        expected = [Loader(db=db).format_item(item) for item in items]

    made = list(load_rows.rows(database, items))
    times, pgstacs = _times(made), _times(expected)
    assert made == expected
    assert pgstacs[:3] == [("2021-01-01T00:00:00Z", "2021-01-01T00:00:00Z"),
                           ("2021-01-02T00:00:00Z", "2021-02-02T00:00:00+01:00"),
                           ("2021-01-03T00:00:00Z", "2021-01-03T00:00:00Z")]
    assert times[:3] == [("2021-01-01T00:00:00+00:00", "2021-01-01T00:00:00+00:00"),
                         ("2021-01-02T00:00:00+00:00", "2021-02-01T23:00:00+00:00"),
                         ("2021-01-03T00:00:00+00:00", "2021-01-03T00:00:00+00:00")]
    assert [[datetime.fromisoformat(t) for t in pair] for pair in times] == [
        [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in pair] for pair in pgstacs]
    assert {row["partition"] for row in expected} == {"_items_1", "_items_2"}
    assert _makers() == []


def test_a_load_inside_its_partitions_bounds_asks_pgstac_to_widen_none(database: str
                                                                       ) -> None:
    """pypgstac's loader compares an item's time with its partition's bounds as text, the
    bounds as it reads them: a load of items inside the bounds calls `make_partition` once,
    which finds the partition made and its constraint around them, and never pgstac's
    `check_partition`."""
    calls = ("SELECT funcname, sum(calls) FROM pg_stat_user_functions WHERE funcname IN "
             "('check_partition', 'make_partition') GROUP BY 1 ORDER BY 1")
    load_workers.load_items(database, [make_item(f"edge{day}", "rows-b", day=day)
                                       for day in (1, 28)], "insert", 1)
    with psycopg.connect(database, autocommit=True) as conn:
        before = dict(conn.execute(calls).fetchall())
        load_workers.load_items(database, [make_item(f"inside{day}", "rows-b", day=day)
                                           for day in range(1, 29)], "insert", 1)
        conn.execute("SELECT pg_stat_clear_snapshot()")
        after = dict(conn.execute(calls).fetchall())

    assert {name: after.get(name, 0) - before.get(name, 0)
            for name in ("check_partition", "make_partition")} == {
        "check_partition": 0, "make_partition": 1}


def test_a_row_that_cannot_be_made_fails_the_reader(database: str) -> None:
    items = _items(10)
    items[6]["properties"] = {"title": "no time"}
    read: list[str] = []

    with pytest.raises(Exception) as failed:  # pypgstac raises Exception itself
        for row in load_rows.rows(database, items):
            read.append(row["id"])

    assert str(failed.value) == "Invalid datetime encountered"
    assert read == ["i0", "i1", "i2", "i3", "i4", "i5"]
    assert _makers() == []


def test_a_reader_that_stops_leaves_no_thread(database: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load_rows, "ROWS_AHEAD", 4)  # the maker waits on a full queue
    made = load_rows.rows(database, _items(60))

    assert [next(made)["id"] for _ in range(3)] == ["i0", "i1", "i2"]
    assert len(_makers()) == 1
    made.close()
    assert _makers() == []
