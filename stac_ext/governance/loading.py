"""A vocabulary table into the database, in one transaction: a convention's first load,
or an update to a newer version whose retired names become aliases (or stay known, marked
retired, where the new table names no successor). Collections and items are never
touched: a collection of a retired name keeps its id and its items."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import psycopg

from stac_ext.governance import queries
from stac_ext.governance.tables import CF, Table, TableError, read_table, shipped_cf_table

Mode = Literal["load", "update", "missing"]


@dataclass
class Loaded:
    """What a load did (`changed` False: nothing, the version was loaded already)."""

    convention: str
    version: str
    previous: str | None = None
    names: int = 0
    aliases: int = 0
    added: int = 0
    retired: list[str] = field(default_factory=list)  # names that became aliases or retired
    changed: bool = True

    def summary(self) -> str:
        if not self.changed:
            return f"vocabulary {self.convention} {self.version} (up to date)"
        what = f"vocabulary {self.convention} {self.previous or 'none'} -> {self.version}: " \
               f"{_counted(self.names, 'name')}, {_counted(self.aliases, 'alias', 'aliases')}"
        if self.previous is not None:
            what += f", {self.added} new, {len(self.retired)} retired"
        return what


def newer(version: str, than: str) -> bool:
    """Whether `version` follows `than` (numbers compared as numbers: CF's are)."""
    if version.isdigit() and than.isdigit():
        return int(version) > int(than)
    return version > than


def load(conn: psycopg.Connection, table: Table, loaded_by: str, mode: Mode) -> Loaded:
    """Load `table`: `load` a convention not loaded yet, `update` one that is (to a newer
    version), `missing` only if it is not loaded (what `migrate` does). `TableError` says
    why not; the connection must not be in a transaction (this opens its own)."""
    with conn.transaction():
        row = conn.execute(queries.LOCK_CONVENTION, (table.convention,)).fetchone()
        previous = row[0] if row else None
        if previous is not None and mode == "missing":
            return Loaded(table.convention, previous, previous, changed=False)
        if previous is not None and mode == "load":
            raise TableError(f"the vocabulary of {table.convention} is loaded already "
                             f"(version {previous}): `geocatalog vocabulary update` loads "
                             "a newer one")
        if previous is None and mode == "update":
            raise TableError(f"no vocabulary of {table.convention} is loaded: "
                             "`geocatalog vocabulary load` loads a first one")
        if previous is not None:
            if previous == table.version:
                return Loaded(table.convention, previous, previous, changed=False)
            if not newer(table.version, previous):
                raise TableError(f"version {table.version} of {table.convention} is older "
                                 f"than the loaded one ({previous})")
        return _write(conn, table, loaded_by, previous)


def _write(conn: psycopg.Connection, table: Table, loaded_by: str,
           previous: str | None) -> Loaded:
    convention = table.convention
    known: dict[str, str | None] = dict(  # key -> the version that retired it
        conn.execute(queries.KEYS, (convention,)).fetchall())
    old = {key for key, retired_in in known.items() if retired_in is None}
    new = {e.name.lower() for e in table.entries}
    aliases = {a.lower(): (a, t.lower()) for a, t in table.aliases.items()}
    retired = sorted(old - new) if previous is not None else []
    since: dict[str, str | None] = dict(
        conn.execute(queries.ALIAS_SINCE, (convention,)).fetchall())
    conn.execute(queries.UPSERT_CONVENTION, (convention, table.title, table.version,
                                             table.source))
    conn.execute(queries.UPSERT_NAMES, (
        convention, [e.name.lower() for e in table.entries], [e.name for e in table.entries],
        [e.description for e in table.entries], [e.units for e in table.entries]))
    # a name the new table drops: an alias where it names one, else known and retired
    conn.execute(queries.RETIRE_NAMES, (table.version, convention,
                                        [k for k in retired if k not in aliases]))
    conn.execute(queries.DELETE_ALIASES, (convention,))
    conn.execute(queries.INSERT_ALIASES, (
        convention, list(aliases), [a for a, _ in aliases.values()],
        [t for _, t in aliases.values()],
        [table.version if k in known else since.get(k) for k in aliases]))
    conn.execute(queries.DROP_ALIASED_NAMES, (convention,))
    counts = conn.execute(queries.COUNTS, {"c": convention}).fetchone()
    assert counts is not None
    done = Loaded(convention, table.version, previous, names=counts[0], aliases=counts[1],
                  added=len(new - old) if previous is not None else len(new),
                  retired=retired)
    conn.execute(queries.RECORD_LOAD, (convention, table.version, previous, table.source,
                                       loaded_by, done.names, done.aliases, done.added,
                                       retired))
    return done


def load_shipped_cf(conn: psycopg.Connection) -> tuple[str, bool]:
    """`migrate`'s load: the CF table that `compliance-checker` ships, when no CF
    vocabulary is loaded yet (a newer one is `geocatalog vocabulary update`'s)."""
    row = conn.execute(queries.VERSION, (CF,)).fetchone()
    if row is not None:
        return f"vocabulary {CF} {row[0]} (up to date)", False
    done = load(conn, read_table(shipped_cf_table()), "migrate", "missing")
    return done.summary(), done.changed


def _counted(count: int, noun: str, nouns: str | None = None) -> str:
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
