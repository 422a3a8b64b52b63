"""Least privilege: the API, the workers and job processes each connect as a role with
only what that part needs; the migrating role keeps owning the schemas."""

from __future__ import annotations

import httpx
import psycopg
import pytest

from stac_ext.platform.database import roles
from tests.support.jobs import execute, wait_for

#: (role, statement, allowed): what each part may and may not do.
RIGHTS = [
    (roles.API, "SELECT count(*) FROM pgstac.items", True),
    (roles.API, "SELECT count(*) FROM catalogs.links", True),
    (roles.API, "SELECT count(*) FROM processes.jobs", True),
    (roles.API, "SELECT count(*) FROM procrastinate.procrastinate_jobs", True),
    (roles.API, "SELECT count(*) FROM sessions.sessions", True),
    (roles.API, "DROP TABLE catalogs.links", False),
    (roles.API, "CREATE TABLE geocatalog.intruder (i int)", False),
    (roles.API, "DELETE FROM geocatalog.schema_migrations", False),
    (roles.API, "CREATE ROLE intruder", False),
    (roles.WORKER, "SELECT count(*) FROM processes.jobs", True),
    (roles.WORKER, "SELECT count(*) FROM procrastinate.procrastinate_jobs", True),
    (roles.WORKER, "SELECT pgstac.get_version()", True),
    (roles.WORKER, "SELECT count(*) FROM pgstac.items", False),
    (roles.WORKER, "SELECT count(*) FROM catalogs.catalogs", False),
    (roles.WORKER, "DROP TABLE processes.jobs", False),
    (roles.WORKER, "SELECT count(*) FROM sessions.sessions", False),  # browsers' tokens
    (roles.JOB, "SELECT count(*) FROM pgstac.items", True),
    (roles.JOB, "SELECT count(*) FROM catalogs.catalogs", True),
    (roles.JOB, "SELECT count(*) FROM processes.jobs", False),
    (roles.JOB, "SELECT count(*) FROM procrastinate.procrastinate_jobs", False),
    (roles.JOB, "DROP TABLE catalogs.catalogs", False),
    (roles.JOB, "SELECT count(*) FROM sessions.sessions", False),
]


def _dsn(settings, role: str) -> str:
    return {roles.API: settings.api_dsn, roles.WORKER: settings.worker_dsn,
            roles.JOB: settings.job_dsn}[role]


@pytest.mark.parametrize(("role", "statement", "allowed"), RIGHTS,
                         ids=[f"{r} {s}" for r, s, _ in RIGHTS])
def test_each_role_has_only_what_its_part_needs(settings, role: str, statement: str,
                                                allowed: bool) -> None:
    with psycopg.connect(_dsn(settings, role)) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (role,)
        if allowed:
            conn.execute(statement)
        else:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        conn.rollback()


async def test_the_api_connects_as_its_role(app, alice_data: httpx.AsyncClient) -> None:
    assert (await alice_data.get("/data/collections")).status_code == 200
    for pool in (app.state.readpool, app.state.writepool):
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT current_user") == roles.API


async def test_a_job_that_needs_the_database_gets_the_job_role(
        alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "test-database-role", {})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job
    results = await alice_processes.get(f"{r.headers['Location']}/results")
    assert results.json() == {"role": roles.JOB}
