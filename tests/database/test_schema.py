"""The database's shape after every migration, in one file that reads as a review reads it:
each schema of ours (its tables' columns, constraints, indexes and triggers; its types; its
functions' signatures) and the triggers our functions put on pgstac's tables. A database
made afresh by `migrate` is compared with tests/database/schema.txt whole, so that a
migration's effect shows as a diff of that file beside it.

`GEOCATALOG_WRITE_SCHEMA=1` writes the file from the database instead (a migration's
author runs it once, then reads the diff).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import psycopg
import pytest

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.migrations import migrate
from tests.support.cluster import new_database

pytestmark = pytest.mark.slow  # a database migrated afresh: seconds

SNAPSHOT = Path(__file__).with_name("schema.txt")
#: Our schemas: one per migration set.
SCHEMAS = [migration_set.schema for migration_set in MIGRATIONS]
HEADER = """\
# The database's shape after every migration (tests/database/test_schema.py compares a
# database made by `migrate` with this file). Written, not edited:
# GEOCATALOG_WRITE_SCHEMA=1 .venv/bin/pytest tests/database/test_schema.py
"""

_RELATIONS = """
SELECT c.oid, n.nspname || '.' || c.relname,
       CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                      WHEN 'c' THEN 'type' WHEN 'p' THEN 'partitioned table'
                      ELSE 'table' END
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = ANY(%s) AND c.relkind IN ('r', 'p', 'v', 'm', 'c') AND NOT c.relispartition
ORDER BY n.nspname, c.relname"""

_COLUMNS = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid), a.attgenerated, a.attidentity
FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum"""

_CONSTRAINTS = """
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s
ORDER BY conname"""

# the indexes that are not a constraint's (those are listed with their constraint)
_INDEXES = """
SELECT c.relname, pg_get_indexdef(i.indexrelid)
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = %s AND NOT EXISTS (SELECT 1 FROM pg_constraint k
                                      WHERE k.conindid = i.indexrelid AND k.conrelid = %s)
ORDER BY c.relname"""

_TRIGGERS = """
SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = %s AND NOT tgisinternal
ORDER BY tgname"""

# our functions' triggers on tables of other schemas (pgstac's items, its statistics)
_TRIGGERS_ELSEWHERE = """
SELECT pg_get_triggerdef(t.oid)
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     JOIN pg_namespace tn ON tn.oid = c.relnamespace
     JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_namespace pn ON pn.oid = p.pronamespace
WHERE pn.nspname = ANY(%s) AND tn.nspname <> ALL(%s) AND NOT c.relispartition
      AND NOT t.tgisinternal
ORDER BY tn.nspname, c.relname, t.tgname"""

_ENUMS = """
SELECT n.nspname || '.' || t.typname, string_agg(quote_literal(e.enumlabel), ', '
                                                 ORDER BY e.enumsortorder)
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
     JOIN pg_enum e ON e.enumtypid = t.oid
WHERE n.nspname = ANY(%s) GROUP BY 1 ORDER BY 1"""

_FUNCTIONS = """
SELECT n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid)
       || ')',
       CASE p.prokind WHEN 'p' THEN 'procedure'
                      ELSE 'returns ' || pg_get_function_result(p.oid) END,
       l.lanname,
       CASE p.provolatile WHEN 'i' THEN 'immutable' WHEN 's' THEN 'stable'
                          ELSE 'volatile' END,
       p.prosecdef, coalesce(array_to_string(p.proconfig, ', '), '')
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     JOIN pg_language l ON l.oid = p.prolang
WHERE n.nspname = ANY(%s) ORDER BY 1, 2"""


def _column(name: str, kind: str, not_null: bool, default: str | None, generated: str,
            identity: str) -> str:
    words = [f"  {name} {kind}"]
    if not_null:
        words.append("not null")
    if identity:
        words.append("generated " + {"a": "always", "d": "by default"}[identity]
                     + " as identity")
    elif generated:
        words.append(f"generated always as ({default}) stored")
    elif default is not None:
        words.append(f"default {default}")
    return " ".join(words)


def describe(conn: psycopg.Connection) -> str:
    """Our schemas' shape, one line a column, constraint, index, trigger or function."""
    conn.execute("SET search_path TO pg_catalog")  # every name written with its schema
    lines = [HEADER]
    for oid, name, kind in conn.execute(_RELATIONS, (SCHEMAS,)).fetchall():
        lines.append(f"{kind} {name}")
        lines += [_column(*row) for row in conn.execute(_COLUMNS, (oid,))]
        lines += [f"  constraint {constraint}: {definition}"
                  for constraint, definition in conn.execute(_CONSTRAINTS, (oid,))]
        lines += [f"  index {index}: {definition.split(' USING ', 1)[1]}"
                  for index, definition in conn.execute(_INDEXES, (oid, oid))]
        lines += [f"  {definition}" for (definition,) in conn.execute(_TRIGGERS, (oid,))]
        lines.append("")
    lines.append("triggers of ours on other schemas' tables")
    lines += [f"  {definition}" for (definition,)
              in conn.execute(_TRIGGERS_ELSEWHERE, (SCHEMAS, SCHEMAS))]
    lines.append("")
    lines += [f"enum {name}: {labels}" for name, labels in conn.execute(_ENUMS, (SCHEMAS,))]
    lines.append("functions")
    for signature, result, language, volatility, definer, config in conn.execute(
            _FUNCTIONS, (SCHEMAS,)):
        traits = [language, volatility, *(["security definer"] if definer else []),
                  *([f"set {config}"] if config else [])]
        lines.append(f"  {signature} {result}; {', '.join(traits)}")
    return "\n".join(lines) + "\n"


def test_the_schema_after_every_migration_is_the_snapshots(database_url: str) -> None:
    url = new_database(database_url, "schema_")
    migrate(url, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    with psycopg.connect(url) as conn:
        shape = describe(conn)
    if os.environ.get("GEOCATALOG_WRITE_SCHEMA"):
        SNAPSHOT.write_text(shape)
    kept = SNAPSHOT.read_text() if SNAPSHOT.exists() else ""
    assert shape == kept, "".join(difflib.unified_diff(
        kept.splitlines(keepends=True), shape.splitlines(keepends=True),
        "tests/database/schema.txt", "the database after migrate")) + (
        "\nA change of the schema: GEOCATALOG_WRITE_SCHEMA=1 writes the file anew.")
