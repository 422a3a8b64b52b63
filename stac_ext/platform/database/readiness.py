"""Is the database ready for this code: every schema at the version it ships?

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
       to_regclass('pgstac.migrations') IS NOT NULL AS has_pgstac
"""
PGSTAC_VERSION = "SELECT pgstac.get_version()"
#: The applied version of each of our schemas.
VERSIONS = """
SELECT schema_name, max(version) AS version
FROM geocatalog.schema_migrations GROUP BY schema_name
"""
ENGINE = "procrastinate"


def expected(sets: Iterable[MigrationSet]) -> dict[str, int]:
    """The latest migration of each schema this code ships."""
    return {migration_set.schema: migration_set.latest for migration_set in sets}


def pending(expected: Mapping[str, int], pgstac: str | None, engine: bool,
            applied: Mapping[str, int]) -> list[str]:
    """The schemas not (yet) at the version this code ships, by name."""
    late = [] if pgstac == pypgstac.__version__ else ["pgstac"]
    late += [] if engine else [ENGINE]
    return late + sorted(s for s, version in expected.items() if applied.get(s, 0) < version)


async def check(conn: Any, expected: Mapping[str, int]) -> tuple[str | None, list[str]]:
    """(pgstac's version, pending schemas) over an asyncpg connection."""
    state = await conn.fetchrow(STATE)
    version = await conn.fetchval(PGSTAC_VERSION) if state["has_pgstac"] else None
    applied = {r["schema_name"]: r["version"] for r in await conn.fetch(VERSIONS)} \
        if state["bookkept"] else {}
    return version, pending(expected, version, state["engine"], applied)


def check_sync(dsn: str, expected: Mapping[str, int]) -> list[str]:
    """The pending schemas, over a psycopg connection of its own."""
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        state = conn.execute(STATE).fetchone()
        assert state is not None
        bookkept, engine, has_pgstac = state
        row = conn.execute(PGSTAC_VERSION).fetchone() if has_pgstac else None
        applied: dict[str, int] = dict(conn.execute(VERSIONS).fetchall()) if bookkept else {}
    return pending(expected, row[0] if row else None, engine, applied)
