"""The SQL schema of every package, in dependency order: what `geocatalog migrate` applies."""

from __future__ import annotations

from pathlib import Path

import catalogs_ext
from stac_ext.database.migrations import MigrationSet

MIGRATIONS = [
    MigrationSet("geocatalog", Path(__file__).parent / "migrations"),
    MigrationSet("catalogs", catalogs_ext.MIGRATIONS_DIR),
]
