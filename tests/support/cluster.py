"""Throwaway PostgreSQL for tests: clusters started from the system binaries in a temp dir
the `postgres` user can reach, migrated, removed afterwards; fresh databases beside one."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.database.migrations import migrate
from tests.support.cli import run_cli
from tests.support.http import free_port
from tests.support.roles import known, role_env
from tests.support.stac import make_collection, unique


@contextmanager
def migrated_cluster(prefix: str) -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    cluster = Cluster(datadir=root / "pg", port=free_port())
    cluster.start()
    try:
        migrate(cluster.dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
        with known(cluster):
            yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def new_database(database_url: str, prefix: str) -> str:
    """A new, empty database beside the one of `database_url` (same cluster): its URL."""
    name = unique(prefix)
    server = database_url.rsplit("/", 1)[0]
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


def migrated_database(database_url: str, prefix: str) -> str:
    """A new database beside the one of `database_url`, migrated as an operator does
    (`geocatalog migrate`, with the service's roles): its URL."""
    url = new_database(database_url, prefix)
    out = run_cli("migrate", env={"DATABASE_URL": url, **role_env(url)})
    assert out.returncode == 0, out.stderr[-2000:]
    return url


def loading_database(database_url: str, prefix: str, collections: Iterable[str]) -> str:
    """`migrated_database` holding these collections (pgstac's own), its sessions counting
    the calls of PL functions (`pg_stat_user_functions`): its URL."""
    url = migrated_database(database_url, prefix)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{conn.info.dbname}" SET track_functions = \'pl\'')
        for collection in collections:
            conn.execute("SELECT pgstac.create_collection(%s)",
                         (Jsonb(make_collection(collection)),))
    return url
