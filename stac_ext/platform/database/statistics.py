"""The planner's statistics after a bulk change: the tables a migration's batched steps or
a load fill in bulk are analyzed before the command returns. Autovacuum's ANALYZE may come a
minute later; until then the planner plans with what the table held before (an items page
ran 7x slower right after `migrate` filled the search index)."""

from __future__ import annotations

import psycopg

#: The tables filled in bulk: the search index (by `migrate`'s steps, and by the triggers
#: of every item a load writes).
ANALYZE_BULK = "ANALYZE geocatalog.search_items"


def refresh(conn: psycopg.Connection) -> None:
    conn.execute(ANALYZE_BULK)
