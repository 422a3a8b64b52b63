"""Schema migrations: pgstac's (through pypgstac) then each package's SQL.

A package that stores anything ships `migrations/NNN_description.sql` files for its own
schema (tables, indexes, data: each runs once, its version recorded in
`geocatalog.schema_migrations`) and `functions/*.sql` files (its SQL functions, one source
per concern: each file is applied again whenever its content changes, its SHA-256 recorded
in `geocatalog.schema_functions`; a change of a function is then a diff of that file). The
composition root hands the sets to `migrate()`. A set's pending migrations and changed
function files are one transaction: the functions first (once the set's schema exists:
migrations may call them, and their bodies are checked when they run), under an advisory
lock so that concurrent starters do not race. A transaction that deadlocks (autovacuum, analyzing
a table the migration alters, waits for the migration's transaction while holding the
table) is rolled back whole and run again. Then each set's steps run (work over
pgstac's partitions, done a batch per transaction so that no transaction locks them all,
whatever their number) and its loads (data such as a vocabulary), and the parts' roles
get their rights (`roles.py`).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from pypgstac.db import PgstacDB

from stac_ext.platform.database import roles, statistics

_FILE = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")
_LOCK_KEY = 0x6765_6F63  # "geoc": serialises concurrent `migrate` runs
T = TypeVar("T")
_ATTEMPTS = 5  # of one transaction that deadlocks

#: A record of what was applied to a schema, when: by `key` (a table of this shape each).
_APPLIED = """
CREATE TABLE IF NOT EXISTS geocatalog.{table} (
    schema_name text NOT NULL,
    {key} {key_type} NOT NULL,
    {what} text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (schema_name, {key})
);
"""
_BOOKKEEPING = "CREATE SCHEMA IF NOT EXISTS geocatalog;" + _APPLIED.format(
    table="schema_migrations", key="version", key_type="int", what="name"
) + _APPLIED.format(table="schema_functions", key="file", key_type="text", what="sha256")


@dataclass(frozen=True)
class MigrationSet:
    """The migrations of one package: its schema name, the folder of its SQL files, and its
    steps: statements answering how many units of work they did (e.g. partitions), each run
    in a transaction of its own until it answers 0, at every `migrate`."""

    schema: str
    directory: Path
    steps: tuple[tuple[str, str], ...] = ()  # (what it does, statement)
    functions: Path | None = None  # its functions' SQL files (CREATE OR REPLACE)
    #: data it loads once its schema is current (e.g. a vocabulary), each in its own
    #: transaction: (what, whether it loaded anything now)
    loads: tuple[Callable[[psycopg.Connection], tuple[str, bool]], ...] = ()

    def files(self) -> list[tuple[int, Path]]:
        found = [(int(m.group(1)), p) for p in self.directory.glob("*.sql")
                 if (m := _FILE.match(p.name))]
        return sorted(found)

    @property
    def latest(self) -> int:
        return max((version for version, _ in self.files()), default=0)

    def function_files(self) -> list[tuple[Path, str]]:
        """Its function files and their SHA-256, in name order."""
        found = sorted(self.functions.glob("*.sql")) if self.functions is not None else []
        return [(path, hashlib.sha256(path.read_bytes()).hexdigest()) for path in found]


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

    def pgstac() -> tuple[str | None, str]:
        """Its version before and after (a session per attempt: a failed one is left
        mid-transaction, and rolled back it leaves the version as it was)."""
        with PgstacDB(dsn=dsn) as db:
            return db.version, str(Migrate(db).run_migration())

    before, after = _again_on_deadlock(pgstac, echo)
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
                applied += _again_on_deadlock(
                    partial(_apply_set, conn, migration_set, echo), echo)
            stepped = []
            for migration_set in sets:
                stepped += _run_steps(conn, migration_set, echo)
                for load in migration_set.loads:
                    what, done = load(conn)
                    if done:
                        stepped.append(what)
                    echo(what)
            applied += stepped
            if applied:  # before anything plans with what the tables held before
                statistics.refresh_after_migration(conn)
            roles.grant(conn, echo)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied


def _again_on_deadlock(run: Callable[[], T], echo: Callable[[str], None]) -> T:
    """`run` (one transaction), run again when the server rolled it back as a deadlock."""
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            return run()
        except psycopg.errors.DeadlockDetected:
            if attempt == _ATTEMPTS:
                raise
            echo(f"deadlocked with another session, rolled back: trying again ({attempt})")
            time.sleep(0.5 * attempt)
    raise AssertionError("unreachable")


def _first_row(conn: psycopg.Connection, statement: str) -> tuple[Any, ...] | None:
    return conn.execute(statement).fetchone()


def _run_steps(conn: psycopg.Connection, migration_set: MigrationSet,
               echo: Callable[[str], None]) -> list[str]:
    """Each step until it has nothing left to do, one transaction per run (autocommit)."""
    done = []
    for what, statement in migration_set.steps:
        total = 0
        step = partial(_first_row, conn, statement)
        while (row := _again_on_deadlock(step, echo)) and row[0]:
            total += int(row[0])
        if total:
            done.append(f"{migration_set.schema}: {what} ({total})")
            echo(done[-1])
    return done


def _apply_set(
    conn: psycopg.Connection, migration_set: MigrationSet, echo: Callable[[str], None]
) -> list[str]:
    """The set's pending migrations and changed function files, in one transaction."""
    schema = migration_set.schema
    done = {row[0] for row in conn.execute(
        "SELECT version FROM geocatalog.schema_migrations WHERE schema_name = %s", (schema,))}
    applied: list[str] = []
    files = migration_set.function_files()
    current = False  # its functions are the files' (checked once its schema exists)
    with conn.transaction():
        for version, path in migration_set.files():
            if version in done:
                continue
            if not current:
                current = _apply_functions(conn, schema, files, echo, applied)
            conn.execute(path.read_text())
            conn.execute(
                "INSERT INTO geocatalog.schema_migrations (schema_name, version, name) "
                "VALUES (%s, %s, %s)", (schema, version, path.stem))
            applied.append(f"{schema} {path.stem}")
            echo(f"applied {applied[-1]}")
        if not current:
            _apply_functions(conn, schema, files, echo, applied)
    if not applied:
        echo(f"{schema} {migration_set.latest:03d} (up to date)")
    return applied


def _apply_functions(conn: psycopg.Connection, schema: str, files: list[tuple[Path, str]],
                     echo: Callable[[str], None], applied: list[str]) -> bool:
    """The function files whose content changed since they were applied (noted in
    `applied`); False, and nothing done, while the schema does not exist yet (its first
    migration makes it)."""
    exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
    if exists.fetchone() is None:
        return False
    recorded: dict[str, str] = dict(conn.execute(
        "SELECT file, sha256 FROM geocatalog.schema_functions WHERE schema_name = %s",
        (schema,)).fetchall())
    changed = [(path, sha) for path, sha in files if recorded.get(path.name) != sha]
    if not changed:
        return True
    # a body may name what a later migration of this run makes: checked when it runs
    conn.execute("SET LOCAL check_function_bodies = off")
    for path, sha in changed:
        conn.execute(path.read_text())
        conn.execute(
            "INSERT INTO geocatalog.schema_functions (schema_name, file, sha256) "
            "VALUES (%s, %s, %s) ON CONFLICT (schema_name, file) DO UPDATE "
            "SET sha256 = EXCLUDED.sha256, applied_at = now()", (schema, path.name, sha))
    applied.append(f"{schema} functions {', '.join(path.stem for path, _ in changed)}")
    echo(f"applied {applied[-1]}")
    return True
