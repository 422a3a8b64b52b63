"""A load's rows are made by a thread ahead of pypgstac's loader (`load_rows.rows`): the
same rows pypgstac makes, in the same order; a row it cannot make fails the load with
pypgstac's message; a reader that stops early leaves no thread behind."""

from __future__ import annotations

import threading

import psycopg
import pytest
from psycopg.types.json import Jsonb
from pypgstac.db import PgstacDB
from pypgstac.load import Loader

from stac_ext.platform.database import load_rows
from tests.support.cluster import migrated_database
from tests.support.stac import make_collection, make_item


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    url = migrated_database(database_url, "load_rows_")
    with psycopg.connect(url, autocommit=True) as conn:
        for collection in ("rows-a", "rows-b"):
            conn.execute("SELECT pgstac.create_collection(%s)",
                         (Jsonb(make_collection(collection)),))
    return url


def _items(count: int) -> list[dict]:
    items = [make_item(f"i{n}", "rows-a" if n % 3 else "rows-b", x=n % 170, day=n % 28 + 1)
             for n in range(count)]
    items[1]["properties"] = {"datetime": None, "start_datetime": "2021-01-02T00:00:00Z",
                              "end_datetime": "2021-02-02T00:00:00+01:00"}
    return items


def _makers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == load_rows.THREAD_NAME]


def test_rows_are_pgstacs_in_order(database: str) -> None:
    items = _items(40)
    with PgstacDB(dsn=database) as db:
        expected = [Loader(db=db).format_item(item) for item in items]

    assert list(load_rows.rows(database, items)) == expected
    assert expected[1]["datetime"] == "2021-01-02T00:00:00Z"
    assert expected[1]["end_datetime"] == "2021-02-02T00:00:00+01:00"
    assert {row["partition"] for row in expected} == {"_items_1", "_items_2"}
    assert _makers() == []


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
