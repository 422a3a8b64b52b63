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
#: of every item a load writes) and its kept counts (by the index's triggers).
ANALYZE_BULK = "ANALYZE geocatalog.search_items, geocatalog.item_counts"


#: The same, with the pages all of whose rows every transaction sees marked so (outside a
#: transaction); a page already marked is skipped.
VACUUM_BULK = "VACUUM (ANALYZE) geocatalog.search_items, geocatalog.item_counts"


def refresh(conn: psycopg.Connection) -> None:
    conn.execute(ANALYZE_BULK)


def refresh_after_migration(conn: psycopg.Connection) -> None:
    """`refresh`, and the visibility map; on an autocommit connection."""
    conn.execute(VACUUM_BULK)
