"""Schema migrations: pgstac's (through pypgstac) then each package's versioned SQL files.

A package that stores anything ships `NNN_description.sql` files for its own schema; the
composition root hands the list of (schema, directory) pairs to `migrate()`. Applied
versions are recorded in `geocatalog.schema_migrations`; each file runs once, in its own
transaction, under an advisory lock so that concurrent starters do not race. Then each
set's steps run (work over pgstac's partitions, done a batch per transaction so that no
transaction locks them all, whatever their number), and the parts' roles get their rights
(`roles.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from pypgstac.db import PgstacDB

from stac_ext.platform.database import roles, statistics

_FILE = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")
_LOCK_KEY = 0x6765_6F63  # "geoc": serialises concurrent `migrate` runs

_BOOKKEEPING = """
CREATE SCHEMA IF NOT EXISTS geocatalog;
CREATE TABLE IF NOT EXISTS geocatalog.schema_migrations (
    schema_name text NOT NULL,
    version int NOT NULL,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (schema_name, version)
);
"""


@dataclass(frozen=True)
class MigrationSet:
    """The migrations of one package: its schema name, the folder of its SQL files, and its
    steps: statements answering how many units of work they did (e.g. partitions), each run
    in a transaction of its own until it answers 0, at every `migrate`."""

    schema: str
    directory: Path
    steps: tuple[tuple[str, str], ...] = ()  # (what it does, statement)

    def files(self) -> list[tuple[int, Path]]:
        found = [(int(m.group(1)), p) for p in self.directory.glob("*.sql")
                 if (m := _FILE.match(p.name))]
        return sorted(found)

    @property
    def latest(self) -> int:
        return max((version for version, _ in self.files()), default=0)


#: Installs a library's own schema (e.g. the job engine's) if missing: (what, installed now).
Bootstrap = Callable[[psycopg.Connection], tuple[str, bool]]


def migrate(
    dsn: str, sets: Iterable[MigrationSet], echo: Callable[[str], None] = print,
    bootstraps: Iterable[Bootstrap] = (),
) -> list[str]:
    """Bring pgstac and every package schema up to date; return what was applied."""
    # here, not at the top: pypgstac's migrate module brings smart_open and boto3 (40 MB),
    # which the API's workers, importing this module for `/healthz`, never need
    from pypgstac.migrate import Migrate

    applied: list[str] = []
    with PgstacDB(dsn=dsn) as db:
        before = db.version
        after = Migrate(db).run_migration()
    if before != after:
        applied.append(f"pgstac {before or 'none'} -> {after}")
        echo(applied[-1])
    else:
        echo(f"pgstac {after} (up to date)")

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        try:
            conn.execute(_BOOKKEEPING)
            for bootstrap in bootstraps:
                what, done = bootstrap(conn)
                if done:
                    applied.append(what)
                echo(f"applied {what}" if done else f"{what} (up to date)")
            for migration_set in sets:
                applied += _apply_set(conn, migration_set, echo)
            stepped = []
            for migration_set in sets:
                stepped += _run_steps(conn, migration_set, echo)
            if stepped:  # before anything plans with what the tables held before
                statistics.refresh(conn)
            applied += stepped
            roles.grant(conn, echo)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied


def _run_steps(conn: psycopg.Connection, migration_set: MigrationSet,
               echo: Callable[[str], None]) -> list[str]:
    """Each step until it has nothing left to do, one transaction per run (autocommit)."""
    done = []
    for what, statement in migration_set.steps:
        total = 0
        while (row := conn.execute(statement).fetchone()) and row[0]:
            total += int(row[0])
        if total:
            done.append(f"{migration_set.schema}: {what} ({total})")
            echo(done[-1])
    return done


def _apply_set(
    conn: psycopg.Connection, migration_set: MigrationSet, echo: Callable[[str], None]
) -> list[str]:
    done = {row[0] for row in conn.execute(
        "SELECT version FROM geocatalog.schema_migrations WHERE schema_name = %s",
        (migration_set.schema,),
    )}
    applied = []
    for version, path in migration_set.files():
        if version in done:
            continue
        with conn.transaction():
            conn.execute(path.read_text())
            conn.execute(
                "INSERT INTO geocatalog.schema_migrations (schema_name, version, name) "
                "VALUES (%s, %s, %s)",
                (migration_set.schema, version, path.stem),
            )
        applied.append(f"{migration_set.schema} {path.stem}")
        echo(f"applied {applied[-1]}")
    if not applied:
        echo(f"{migration_set.schema} {migration_set.latest:03d} (up to date)")
    return applied
