"""A large collection is written in pieces by several loaders at once, after its bounding
items (`load_workers.leading`): every item lands in pgstac and the search index, and the
partition's time constraint is written once and never rebuilt, so no loader's batch can
fall outside it; a collection partitioned by time, or a load with one loader, stays
whole."""

from __future__ import annotations

import psycopg
import pytest

from stac_ext.platform.database import load_workers
from tests.support.cluster import loading_database
from tests.support.stac import make_item

PIECE = 40

#: Calls of pgstac's function that rebuilds a partition's time constraint (pypgstac's
#: loader, after each batch, when its items' times differ from the constraint).
REBUILDS = ("SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions "
            "WHERE funcname = 'create_table_constraints'")


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    url = loading_database(database_url, "load_pieces_", ("pieces", "pieces-monthly"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE pgstac.collections SET partition_trunc = 'month' "
                     "WHERE id = 'pieces-monthly'")
    return url


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load_workers, "PIECE_ITEMS", PIECE)


def _items(collection: str, count: int, first: int = 0) -> list[dict]:
    """Items of 2-27 January 2021, but for the two in the middle: the 1st and the 28th (in
    one piece only)."""
    items = [make_item(f"{collection}-{n}", collection, x=n % 170, day=2 + n % 26)
             for n in range(first, first + count)]
    for item, day in zip(items[count // 2:], ("01", "28"), strict=False):
        item["properties"]["datetime"] = f"2021-01-{day}T00:00:00Z"
    return items


def _rebuilds(conn: psycopg.Connection) -> int:
    conn.execute("SELECT pg_stat_clear_snapshot()")
    row = conn.execute(REBUILDS).fetchone()
    assert row is not None
    return int(row[0])


def test_pieces_are_written_after_their_bounds(database: str) -> None:
    items = _items("pieces", 5 * PIECE + 3)
    lead, rest, divided = load_workers.leading(database, items, "insert", 2)

    assert divided == {"pieces"}
    assert {i["properties"]["datetime"][:10] for i in lead} == {"2021-01-01", "2021-01-28"}
    assert len(lead) == 2 and len(rest) == len(items) - 2
    assert load_workers.leading(database, items, "insert", 1)[2] == set()
    assert load_workers.leading(database, items, "upsert", 2)[2] == set()
    monthly = _items("pieces-monthly", PIECE + 1)
    assert load_workers.leading(database, monthly, "insert", 2)[2] == set()


def test_a_collection_loaded_in_pieces_is_whole(database: str) -> None:
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")  # as pgstac's functions expect
        before = _rebuilds(conn)
        for first in (0, 10 * PIECE):  # a new partition, then one holding items
            items = _items("pieces", 6 * PIECE + 5, first)
            written: list[int] = []
            load_workers.load_items(database, items, "insert", 2, written.append)
            assert _rebuilds(conn) == before
            assert sorted(written) == [2, 3, *[PIECE] * 6]

        stored = conn.execute(
            "SELECT count(*), min(datetime)::text, max(datetime)::text FROM pgstac.items "
            "WHERE collection = 'pieces'").fetchone()
        indexed = conn.execute("SELECT count(*) FROM geocatalog.search_items "
                               "WHERE collection = 'pieces'").fetchone()
        bounds = conn.execute(
            "SELECT m.constraint_dtrange::text FROM pgstac.collections c, "
            "pgstac.partition_catalog_meta('_items_' || c.key) m WHERE c.id = 'pieces'"
        ).fetchone()
    assert stored == (2 * (6 * PIECE + 5), "2021-01-01 00:00:00+00", "2021-01-28 00:00:00+00")
    assert indexed == (2 * (6 * PIECE + 5),)
    assert bounds == ('["2021-01-01 00:00:00+00","2021-01-28 00:00:00+00"]',)
