"""The database roles of the service's parts, each with only what that part needs.

`geocatalog_api` (the data and process APIs, and the in-process worker), `geocatalog_worker`
(`geocatalog worker`) and `geocatalog_job` (the process of a job that declares it needs
the database). The migrating role stays the owner of every schema; `roles.sql` is applied
after every migration run. Imports only psycopg.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg

API = "geocatalog_api"
WORKER = "geocatalog_worker"
JOB = "geocatalog_job"
PARTS = (API, WORKER, JOB)

GRANTS = Path(__file__).with_name("roles.sql")

MAY_CREATE = "SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user"
EXISTING = "SELECT count(*) FROM pg_roles WHERE rolname = ANY(%s)"


def grant(conn: psycopg.Connection, echo: Callable[[str], None]) -> bool:
    """Create the roles if missing and grant each its rights; False (and one line saying
    why) when the migrating role may not: the parts then connect as whoever they are told."""
    row = conn.execute(EXISTING, (list(PARTS),)).fetchone()
    may = conn.execute(MAY_CREATE).fetchone()
    if (row and row[0] < len(PARTS)) and not (may and may[0]):
        echo(f"database roles: skipped ({', '.join(PARTS)} do not exist and this role may "
             "not create them; docs/operators/database.md, Roles)")
        return False
    try:
        with conn.transaction():
            conn.execute(GRANTS.read_text())
    except psycopg.errors.InsufficientPrivilege as e:
        echo(f"database roles: not granted ({e.diag.message_primary}; "
             "docs/operators/database.md, Roles)")
        return False
    echo(f"database roles: {', '.join(PARTS)} (granted)")
    return True
