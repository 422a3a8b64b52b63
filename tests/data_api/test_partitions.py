"""A new collection's partition is made by `geocatalog.make_partition` (the API's writes and
`geocatalog load`) exactly as pgstac's `check_partition` makes it: the same table, indexes
(a queryable's too), constraints, rights, owner, triggers and `partition_stats` row; a
partition that exists is widened by pgstac's own function."""

from __future__ import annotations

import threading
from pathlib import Path

import orjson
import psycopg
import pytest
from psycopg.types.json import Jsonb

from tests.support.cli import run_cli
from tests.support.cluster import migrated_database
from tests.support.stac import make_collection, make_item

JANUARY = ('["2021-01-01 00:00:00+00","2021-01-31 00:00:00+00"]',
           '["2021-01-01 00:00:00+00","2021-02-03 00:00:00+00"]')
WIDER = ('["2020-12-01 00:00:00+00","2021-01-31 00:00:00+00"]',
         '["2020-12-01 00:00:00+00","2021-03-01 00:00:00+00"]')

#: A partition as pgstac and PostgreSQL know it, its name and collection left out.
DESCRIBED = """
WITH p AS (SELECT %(partition)s::text AS name, to_regclass('pgstac.' || %(partition)s) AS oid)
SELECT c.relkind, c.relowner::regrole::text, replace(c.relacl::text, p.name, 'P'),
       replace(pg_get_expr(c.relpartbound, c.oid), %(collection)s, 'C'),
       ARRAY(SELECT replace(i.indexdef, p.name, 'P') FROM pg_indexes i
             WHERE i.schemaname = 'pgstac' AND i.tablename = p.name ORDER BY 1),
       ARRAY(SELECT replace(k.conname, p.name, 'P') || ' ' || pg_get_constraintdef(k.oid)
             FROM pg_constraint k WHERE k.conrelid = p.oid ORDER BY 1),
       ARRAY(SELECT regexp_replace(t.tgname, '_[0-9]+$', '') FROM pg_trigger t
             WHERE t.tgrelid = p.oid ORDER BY 1),
       (SELECT ARRAY[m.partition_dtrange, m.constraint_dtrange, m.constraint_edtrange]::text[]
        FROM pgstac.partition_catalog_meta(p.name) m),
       (SELECT ARRAY[s.partition_dtrange, s.dtrange, s.edtrange]::text || (s.spatial IS NULL)
               || (s.last_updated IS NULL)
        FROM pgstac.partition_stats s WHERE s.partition = p.name),
       ARRAY(SELECT q.indexname FROM pgstac.queryable_indexes(p.name, true) q)
FROM p JOIN pg_class c ON c.oid = p.oid
"""


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return migrated_database(database_url, "partitions_")


def _connect(database: str) -> psycopg.Connection:
    """A session as pgstac's functions expect it (they name each other unqualified),
    showing times in UTC."""
    conn = psycopg.connect(database, autocommit=True)
    conn.execute("SET search_path TO pgstac, public")
    conn.execute("SET TimeZone TO 'UTC'")
    return conn


def _new_collection(conn: psycopg.Connection, collection_id: str) -> str:
    conn.execute("SELECT pgstac.create_collection(%s)", (Jsonb(make_collection(collection_id)),))
    row = conn.execute("SELECT '_items_' || key FROM pgstac.collections WHERE id = %s",
                       (collection_id,)).fetchone()
    assert row is not None
    return row[0]


def _described(conn: psycopg.Connection, partition: str, collection: str) -> tuple:
    row = conn.execute(DESCRIBED, {"partition": partition, "collection": collection}).fetchone()
    assert row is not None, partition
    return row


def _made(conn: psycopg.Connection, function: str, collection: str,
          ranges: tuple[str, str]) -> str:
    row = conn.execute(f"SELECT {function}(%s, %s::tstzrange, %s::tstzrange)",
                       (collection, *ranges)).fetchone()
    assert row is not None
    return row[0]


def _made_meanwhile(first: psycopg.Connection, second: psycopg.Connection,
                    watcher: psycopg.Connection, collection: str,
                    ranges: tuple[str, str]) -> str:
    """`second` makes the partition of `ranges` while `first`'s transaction is open: once
    it waits on a lock, `first` commits; what `second` was answered."""
    answered: list[str] = []
    other = threading.Thread(target=lambda: answered.append(
        _made(second, "geocatalog.make_partition", collection, ranges)))
    other.start()
    while not watcher.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = %s "
            "AND wait_event_type = 'Lock')", (second.info.backend_pid,)).fetchone()[0]:
        pass
    first.commit()
    other.join()
    [made] = answered
    return made


@pytest.mark.parametrize("indexed", [False, True], ids=["plain", "indexed-queryable"])
def test_a_new_partition_is_pgstacs_and_widens_as_pgstacs(database: str, indexed: bool) -> None:
    ours, theirs = f"test_conv-made-{indexed}", f"test_conv-made-{indexed}-twin"
    with _connect(database) as conn:
        made = {c: _new_collection(conn, c) for c in (ours, theirs)}
        if indexed:  # maintain_partitions makes the queryable's index on each
            conn.execute("INSERT INTO pgstac.queryables (name, collection_ids, "
                         "property_index_type) VALUES ('platform', %s, 'BTREE')",
                         ([ours, theirs],))
        assert _made(conn, "geocatalog.make_partition", ours, JANUARY) == made[ours]
        assert _made(conn, "pgstac.check_partition", theirs, JANUARY) == made[theirs]
        first = _described(conn, made[ours], ours)
        assert first == _described(conn, made[theirs], theirs)
        assert first[:2] == ("r", "pgstac_admin")
        assert first[7] == ["[-infinity,infinity]", JANUARY[0], JANUARY[1]]
        assert ("platform" in " ".join(first[4])) is indexed
        assert first[9] == []  # nothing left for pgstac's index upkeep

        assert _made(conn, "geocatalog.make_partition", ours, WIDER) == made[ours]
        assert _made(conn, "pgstac.check_partition", theirs, WIDER) == made[theirs]
        wider = _described(conn, made[ours], ours)
        assert wider == _described(conn, made[theirs], theirs)
        assert wider[7] == ["[-infinity,infinity]", WIDER[0], WIDER[1]]


def test_items_written_through_the_partition_made(database: str) -> None:
    """The partition takes items written as the API writes them, and pgstac's search
    finds them there."""
    collection = "test_conv-made-written"
    with _connect(database) as conn:
        _new_collection(conn, collection)
        items = [make_item(f"i{n}", collection, x=n, day=n) for n in range(1, 4)]
        conn.execute("SELECT geocatalog.create_items(%s)", (Jsonb(items),))
        found = conn.execute("SELECT jsonb_path_query_array(pgstac.search(%s), "
                             "'$.features[*].id')",
                             (Jsonb({"collections": [collection], "datetime":
                                     "2021-01-02T00:00:00Z/2021-01-03T00:00:00Z"}),)).fetchone()
        assert found is not None and found[0] == ["i3", "i2"]


def test_a_load_makes_its_new_collections_partitions_so(database: str, tmp_path: Path) -> None:
    """`geocatalog load` makes a new collection's partition through make_partition before
    pypgstac's loader writes its items (which then finds it made)."""
    collection, twin = "test_conv-made-loaded", "test_conv-made-loaded-twin"
    path = tmp_path / "items.ndjson"
    items = [make_item(f"i{n}", collection, x=n, day=n) for n in range(1, 6)]
    path.write_bytes(b"\n".join(orjson.dumps(d) for d in [make_collection(collection), *items]))
    with _connect(database) as conn:
        conn.execute(f'ALTER DATABASE "{conn.info.dbname}" SET track_functions = \'pl\'')
        calls = "SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE funcname = %s"
        before = conn.execute(calls, ("make_partition",)).fetchone()
        out = run_cli("load", str(path), env={"DATABASE_URL": database})
        assert out.returncode == 0, out.stderr
        conn.execute("SELECT pg_stat_clear_snapshot()")
        after = conn.execute(calls, ("make_partition",)).fetchone()
        assert before is not None and after is not None and after[0] - before[0] == 1
        partition = _new_collection(conn, twin)
        conn.execute("SELECT pgstac.check_partition(%s, %s::tstzrange, %s::tstzrange)",
                     (twin, "[2021-01-01 00:00:00+00,2021-01-05 00:00:00+00]",
                      "[2021-01-01 00:00:00+00,2021-01-05 00:00:00+00]"))
        loaded = conn.execute("SELECT '_items_' || key FROM pgstac.collections WHERE id = %s",
                              (collection,)).fetchone()
        assert loaded is not None
        ours, theirs = _described(conn, loaded[0], collection), _described(conn, partition, twin)
        # pgstac's statistics after the load: the items' ranges, where the twin holds none
        assert ours[:8] == theirs[:8]
        assert ours[8].startswith('{"[-infinity,infinity]","[\\"2021-01-01 00:00:00+00\\"')


def test_writers_making_the_same_partition_at_once_both_write(database: str) -> None:
    """Two writers' first items of one new collection at once (two API requests): the
    second waits for the first's partition and writes into it, with no error."""
    collection = "test_conv-made-at-once"
    with _connect(database) as first, _connect(database) as second, \
            _connect(database) as watcher:
        partition = _new_collection(first, collection)
        first.autocommit = False
        assert _made(first, "geocatalog.make_partition", collection, JANUARY) == partition
        # `second` waits on `first`'s uncommitted partition
        assert _made_meanwhile(first, second, watcher, collection, WIDER) == partition
        assert _described(first, partition, collection)[7] == [
            "[-infinity,infinity]", WIDER[0], WIDER[1]]


def test_writers_widening_one_partition_at_once_keep_both_ranges(database: str) -> None:
    """Two writers widening an existing partition's time constraint at once, each past the
    other's side (two API requests): the constraint ends holding both, and a row of the
    first's range is written after (pgstac alone: the second dropped the first's widening,
    and that row was refused with a CheckViolation)."""
    collection = "test_conv-widened-at-once"
    earlier = ('["2020-06-01 00:00:00+00","2020-06-01 00:00:00+00"]',
               '["2020-06-01 00:00:00+00","2020-06-01 00:00:00+00"]')
    later = ('["2021-09-01 00:00:00+00","2021-09-01 00:00:00+00"]',
             '["2021-09-01 00:00:00+00","2021-09-01 00:00:00+00"]')
    with _connect(database) as first, _connect(database) as second, \
            _connect(database) as watcher:
        partition = _new_collection(first, collection)
        assert _made(first, "geocatalog.make_partition", collection, JANUARY) == partition
        first.autocommit = False
        assert _made(first, "geocatalog.make_partition", collection, earlier) == partition
        # `second` waits on `first`'s widening
        assert _made_meanwhile(first, second, watcher, collection, later) == partition
        assert _described(watcher, partition, collection)[7][1:] == [
            '["2020-06-01 00:00:00+00","2021-09-01 00:00:00+00"]',
            '["2020-06-01 00:00:00+00","2021-09-01 00:00:00+00"]']
        item = make_item("june", collection_id=collection)
        item["properties"]["datetime"] = "2020-06-01T00:00:00Z"
        watcher.execute("SELECT pgstac.create_item(%s)", (Jsonb(item),))
