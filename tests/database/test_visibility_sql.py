"""The SQL's visibility rules read as the access table does (`stac_ext.platform.access`):
`geocatalog.may_read` (an item's properties), `catalogs.may_read` (a catalog) and
`processes.may_read` (a job: the one rule of a job's read and the job list), for every
caller of the table's tests and every visibility, given the caller's one reader
encoding."""

from __future__ import annotations

import json

import psycopg
import pytest

from stac_ext.platform.access import Resource, may
from tests.service.test_access import CALLERS

VISIBILITIES = ("private", "project", "public", None)


@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_an_items_readers_in_sql_are_the_tables(database_url: str,
                                                visibility: str | None) -> None:
    properties = {"owner": "olga", "project": "ocean-lab",
                  **({"visibility": visibility} if visibility else {})}
    with psycopg.connect(database_url) as conn:
        for name, caller in CALLERS.items():
            (sql,) = conn.execute("SELECT geocatalog.may_read(%s::jsonb, %s::jsonb)",
                                  (json.dumps(properties), json.dumps(caller.reader))
                                  ).fetchone() or (None,)
            table = may(caller, "read", Resource("item", "olga", "ocean-lab", visibility))  # type: ignore[arg-type]
            assert sql is table, (name, visibility)


@pytest.mark.parametrize("visibility", VISIBILITIES[:3])
def test_a_catalogs_readers_in_sql_are_the_tables(database_url: str, visibility: str) -> None:
    with psycopg.connect(database_url) as conn:
        for name, caller in CALLERS.items():
            (sql,) = conn.execute("SELECT catalogs.may_read(%s, 'olga', 'ocean-lab', %s::jsonb)",
                                  (visibility, json.dumps(caller.reader))).fetchone() or (None,)
            table = may(caller, "read", Resource("catalog", "olga", "ocean-lab", visibility))  # type: ignore[arg-type]
            assert sql is table, (name, visibility)


@pytest.mark.parametrize("project", ["ocean-lab", None])
def test_a_jobs_readers_in_sql_are_the_tables(database_url: str, project: str | None) -> None:
    with psycopg.connect(database_url) as conn:
        for name, caller in CALLERS.items():
            (sql,) = conn.execute("SELECT processes.may_read('olga', %s, %s::jsonb)",
                                  (project, json.dumps(caller.reader))).fetchone() or (None,)
            table = may(caller, "read", Resource("job", "olga", project))
            assert sql is table, (name, project)
