"""Throwaway PostgreSQL clusters for tests: started from the system binaries in a temp dir
the `postgres` user can reach, migrated, removed afterwards."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stac_ext.database.cluster import Cluster
from stac_ext.database.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.database.migrations import migrate
from tests.support.http import free_port


@contextmanager
def migrated_cluster(prefix: str) -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    cluster = Cluster(datadir=root / "pg", port=free_port())
    cluster.start()
    try:
        migrate(cluster.dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
