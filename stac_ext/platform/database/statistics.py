"""The planner's statistics after a bulk change: the tables a migration's batched steps or
a load fill in bulk are analyzed before the command returns. Autovacuum's ANALYZE may come a
minute later; until then the planner plans with what the table held before, and an items
page reads its whole collection (docs/performance.md). After a migration they are
vacuumed too: a migration that rewrites a table (a new generated column) leaves its
visibility map empty, which autovacuum, counting no new rows, does not fill, and every
index-only count (an items page's, an owner's) then reads each match's row."""

from __future__ import annotations

import psycopg

#: The tables filled in bulk: the search index (by `migrate`'s steps, and by the triggers
#: of every item a load writes), its kept counts and its sample (by the index's triggers).
BULK_TABLES = ("geocatalog.search_items", "geocatalog.item_counts",
               "geocatalog.search_sample")
#: Those of them the database has (an earlier release's has no kept counts).
PRESENT = "SELECT t FROM unnest(%s::text[]) t WHERE to_regclass(t) IS NOT NULL"


def _present(conn: psycopg.Connection) -> str:
    return ", ".join(row[0] for row in conn.execute(PRESENT, (list(BULK_TABLES),)))


def refresh(conn: psycopg.Connection) -> None:
    conn.execute(f"ANALYZE {_present(conn)}")


def refresh_after_migration(conn: psycopg.Connection) -> None:
    """`refresh`, and the visibility map (the pages all of whose rows every transaction
    sees marked so; one already marked is skipped); on an autocommit connection."""
    conn.execute(f"VACUUM (ANALYZE) {_present(conn)}")
