"""`migrate` outlives a deadlock: a session that holds a table the migration alters and then
waits for the migration's transaction (as autovacuum does, analyzing a table and writing its
statistics row the migration's transaction changed) makes the server roll one of the two
back. When that is the migration's transaction, it runs again whole, and `migrate` succeeds.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg

from stac_ext.platform.database.migrations import MigrationSet, migrate
from tests.support.stac import unique

#: A session waiting for a lock on a relation, with whose lock it waits.
_WAITING = """
SELECT count(*) FROM pg_locks
WHERE NOT granted AND relation = %s::regclass AND mode = 'AccessExclusiveLock'
"""


def _holding_then_waiting(url: str, schema: str, held: threading.Event,
                          done: threading.Event) -> None:
    """Hold `schema.t` as autovacuum does; once the migration waits for it, wait for the
    migration's transaction (the row it inserted, uncommitted), closing the circle."""
    with psycopg.connect(url) as conn:
        conn.execute(f"LOCK TABLE {schema}.t IN SHARE UPDATE EXCLUSIVE MODE")
        held.set()
        while conn.execute(_WAITING, (f"{schema}.t",)).fetchone() == (0,):
            time.sleep(0.01)
        # the migration has waited since before this: its deadlock check comes first
        conn.execute(f"INSERT INTO {schema}.marker VALUES (1) ON CONFLICT DO NOTHING")
        conn.commit()
    done.set()


def test_a_migration_rolled_back_as_a_deadlock_runs_again(database_url: str,
                                                         tmp_path: Path) -> None:
    schema = unique("deadlock_")
    (tmp_path / "001_tables.sql").write_text(
        f"CREATE SCHEMA {schema}; CREATE TABLE {schema}.t (a int);"
        f"CREATE TABLE {schema}.marker (n int PRIMARY KEY);")
    first = MigrationSet(schema, tmp_path)
    try:
        assert migrate(database_url, [first], echo=lambda _: None) == [f"{schema} 001_tables"]
        (tmp_path / "002_column.sql").write_text(
            f"INSERT INTO {schema}.marker VALUES (1) ON CONFLICT DO NOTHING;"
            f"ALTER TABLE {schema}.t ADD COLUMN b int;")
        held, done = threading.Event(), threading.Event()
        other = threading.Thread(target=_holding_then_waiting,
                                 args=(database_url, schema, held, done))
        other.start()
        held.wait()
        said: list[str] = []
        try:
            applied = migrate(database_url, [first], echo=said.append)
        finally:
            other.join()
        assert done.is_set()
        assert applied == [f"{schema} 002_column"]
        assert said == [
            "pgstac 0.10.0 (up to date)",
            "deadlocked with another session, rolled back: trying again (1)",
            f"applied {schema} 002_column",
            "database roles: geocatalog_api, geocatalog_worker, geocatalog_job (granted)"]
        with psycopg.connect(database_url) as conn:
            columns = conn.execute(
                "SELECT array_agg(column_name::text ORDER BY ordinal_position) "
                "FROM information_schema.columns WHERE table_schema = %s AND "
                "table_name = 't'", (schema,)).fetchone()
            assert columns == (["a", "b"],)
            assert conn.execute(f"SELECT n FROM {schema}.marker").fetchall() == [(1,)]
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            conn.execute("DELETE FROM geocatalog.schema_migrations WHERE schema_name = %s",
                         (schema,))
