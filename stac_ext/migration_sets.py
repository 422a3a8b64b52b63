"""The SQL schema of every package, in dependency order: what `geocatalog migrate` applies."""

from __future__ import annotations

import catalogs_ext
import process_api
from stac_ext import data_api, governance, subscriptions
from stac_ext.governance.loading import load_shipped_cf
from stac_ext.platform import sessions
from stac_ext.platform.database.migrations import Bootstrap, MigrationSet

#: Partitions put into the search index per transaction (each takes a few locks).
INDEX_BATCH = 50

MIGRATIONS = [
    MigrationSet("geocatalog", data_api.MIGRATIONS_DIR, steps=(
        ("partitions put into the search index",
         f"SELECT geocatalog.index_partitions({INDEX_BATCH})"),),
        functions=data_api.FUNCTIONS_DIR),
    MigrationSet("catalogs", catalogs_ext.MIGRATIONS_DIR, functions=catalogs_ext.FUNCTIONS_DIR,
                 steps=(("variable families made",
                         # the shipped rules, as a dollar-quoted literal
                         "SELECT catalogs.refresh_families($rules$"
                         f"{catalogs_ext.SHIPPED_RULES.read_text()}$rules$::jsonb)"),)),
    MigrationSet("processes", process_api.MIGRATIONS_DIR, functions=process_api.FUNCTIONS_DIR),
    MigrationSet("sessions", sessions.MIGRATIONS_DIR),
    # the conventions' vocabularies (CF's table loaded when missing) and proposals
    MigrationSet("governance", governance.MIGRATIONS_DIR, loads=(load_shipped_cf,)),
    MigrationSet("subscriptions", subscriptions.MIGRATIONS_DIR,
                 functions=subscriptions.FUNCTIONS_DIR),
]

#: Schemas of libraries, installed before ours: the job engine's queue.
BOOTSTRAPS: list[Bootstrap] = [process_api.install_engine_schema]
