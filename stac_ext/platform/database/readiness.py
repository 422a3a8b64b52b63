"""Is the database ready for this code: every schema at the version it ships, and its
functions the ones it ships?

Answered for `/healthz` (asyncpg, the API's pool) and for `geocatalog worker` before it
starts (psycopg): the same statements, the same verdict. A schema that does not exist yet
cannot be named in a statement, hence three small ones, each only once its schema exists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import psycopg
import pypgstac

from stac_ext.platform.database.migrations import MigrationSet

#: Which schemas exist: our bookkeeping, the job engine's queue, pgstac.
STATE = """
SELECT to_regclass('geocatalog.schema_migrations') IS NOT NULL AS bookkept,
       to_regclass('procrastinate.procrastinate_jobs') IS NOT NULL AS engine,
       to_regclass('pgstac.migrations') IS NOT NULL AS has_pgstac,
       to_regclass('geocatalog.schema_functions') IS NOT NULL AS functions
"""
PGSTAC_VERSION = "SELECT pgstac.get_version()"
#: The applied version of each of our schemas.
VERSIONS = """
SELECT schema_name, max(version) AS version
FROM geocatalog.schema_migrations GROUP BY schema_name
"""
#: The function files applied to each schema, by their content's SHA-256.
FUNCTIONS = "SELECT schema_name, file, sha256 FROM geocatalog.schema_functions"
ENGINE = "procrastinate"

#: What this code ships of a schema: its latest migration, and its function files.
Shipped = tuple[int, frozenset[tuple[str, str]]]


def expected(sets: Iterable[MigrationSet]) -> dict[str, Shipped]:
    """The latest migration and the function files of each schema this code ships."""
    return {s.schema: (s.latest, frozenset((path.name, sha) for path, sha in s.function_files()))
            for s in sets}


def pending(expected: Mapping[str, Shipped], pgstac: str | None, engine: bool,
            applied: Mapping[str, int],
            functions: Iterable[tuple[str, str, str]] = ()) -> list[str]:
    """The schemas not (yet) at the version, or with the functions, this code ships."""
    late = [] if pgstac == pypgstac.__version__ else ["pgstac"]
    late += [] if engine else [ENGINE]
    recorded: dict[str, set[tuple[str, str]]] = {}
    for schema, file, sha in functions:
        recorded.setdefault(schema, set()).add((file, sha))
    return late + sorted(s for s, (version, files) in expected.items()
                         if applied.get(s, 0) < version or not files <= recorded.get(s, set()))


async def check(conn: Any, expected: Mapping[str, Shipped]) -> tuple[str | None, list[str]]:
    """(pgstac's version, pending schemas) over an asyncpg connection."""
    state = await conn.fetchrow(STATE)
    version = await conn.fetchval(PGSTAC_VERSION) if state["has_pgstac"] else None
    applied = {r["schema_name"]: r["version"] for r in await conn.fetch(VERSIONS)} \
        if state["bookkept"] else {}
    functions = [tuple(r) for r in await conn.fetch(FUNCTIONS)] if state["functions"] else []
    return version, pending(expected, version, state["engine"], applied, functions)


def check_sync(dsn: str, expected: Mapping[str, Shipped]) -> list[str]:
    """The pending schemas, over a psycopg connection of its own."""
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        state = conn.execute(STATE).fetchone()
        assert state is not None
        bookkept, engine, has_pgstac, has_functions = state
        row = conn.execute(PGSTAC_VERSION).fetchone() if has_pgstac else None
        applied: dict[str, int] = dict(conn.execute(VERSIONS).fetchall()) if bookkept else {}
        functions = conn.execute(FUNCTIONS).fetchall() if has_functions else []
    return pending(expected, row[0] if row else None, engine, applied, functions)
