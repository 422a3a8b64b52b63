"""A catalog of every CF standard name at PostgreSQL's defaults: an existing pgstac database
with 5,000 collections (one partition each) takes `geocatalog migrate` (it failed: out of
shared memory, every partition locked in one transaction), and a search across all of them
answers (pgstac's own fails at these settings). Partitions made afterwards are in the
search index at once."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pypgstac.db import PgstacDB
from pypgstac.migrate import Migrate

from stac_ext.platform.database.cluster import Cluster
from tests.support.cli import run_cli
from tests.support.http import free_port

pytestmark = pytest.mark.slow

COLLECTIONS = 5000


def collection(n: int) -> dict:
    return {"type": "Collection", "stac_version": "1.0.0", "id": f"climate_forecast-var_{n:05d}",
            "description": f"variable {n}", "license": "CC-BY-4.0", "links": [],
            "extent": {"spatial": {"bbox": [[-180, -90, 180, 90]]},
                       "temporal": {"interval": [["2000-01-01T00:00:00Z", None]]}}}


def item(n: int) -> dict:
    x = n % 360 - 180
    return {"type": "Feature", "stac_version": "1.0.0", "id": f"item-{n}",
            "collection": f"climate_forecast-var_{n:05d}",
            "geometry": {"type": "Point", "coordinates": [x, 0]}, "bbox": [x, 0, x, 0],
            "properties": {"datetime": f"20{n % 20:02d}-01-01T00:00:00Z"},
            "assets": {}, "links": []}


def add(dsn: str, numbers: range) -> None:
    """Collections with one item each, through pgstac (its partitions, made as pgstac
    makes them), a few hundred per transaction."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        conn.execute("INSERT INTO collections (content) SELECT value "
                     "FROM jsonb_array_elements(%s::jsonb)",
                     (json.dumps([collection(n) for n in numbers]),))
        for start in range(numbers.start, numbers.stop, 250):
            batch = range(start, min(numbers.stop, start + 250))
            conn.execute("SELECT create_items(%s::jsonb)", (json.dumps([item(n) for n in batch]),))


@pytest.fixture(scope="module")
def cf_database() -> Iterator[str]:
    """pgstac with 5,000 collections of one item each, on a cluster of PostgreSQL's
    defaults (max_locks_per_transaction 64, max_connections 100)."""
    root = Path(tempfile.mkdtemp(prefix="geocatalog-scale-"))
    root.chmod(0o755)
    cluster = Cluster(datadir=root / "pg", port=free_port(), settings={})
    cluster.start()
    try:
        with PgstacDB(dsn=cluster.dsn) as db:
            Migrate(db).run_migration()
        add(cluster.dsn, range(COLLECTIONS))
        yield cluster.dsn
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_migrate_and_search_5000_partitions_at_defaults(cf_database: str) -> None:
    with psycopg.connect(cf_database) as conn:
        assert conn.execute("SHOW max_locks_per_transaction").fetchone() == ("64",)
        assert conn.execute("SHOW max_connections").fetchone() == ("100",)
    out = run_cli("migrate", env={"DATABASE_URL": cf_database})
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"geocatalog: partitions put into the search index ({COLLECTIONS})" \
        in out.stdout.splitlines()

    with psycopg.connect(cf_database, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        assert conn.execute("SELECT count(*) FROM geocatalog.search_items").fetchone() == (
            COLLECTIONS,)
        # the planner knows the rows the steps wrote when migrate returns (its own ANALYZE
        # ran before them; autovacuum's may come a minute later)
        assert conn.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = "
                            "'geocatalog.search_items'::regclass").fetchone() == (COLLECTIONS,)
        page = conn.execute("SELECT geocatalog.search(%s::jsonb)", (json.dumps(
            {"limit": 100, "bbox": [-180, -1, 180, 1],
             "conf": {"nohydrate": True, "context": "on"}}),)  # counted, whatever the number
        ).fetchone()[0]
        assert len(page["features"]) == 100 and page["numberMatched"] == COLLECTIONS
        with pytest.raises(psycopg.errors.OutOfMemory, match="out of shared memory"):
            conn.execute("SELECT search('{\"limit\": 100}')")  # pgstac's own, at defaults

        # a later partition is in the index at once (pgstac records it as it makes it)
        add(cf_database, range(COLLECTIONS, COLLECTIONS + 100))
        assert conn.execute("SELECT count(*) FROM geocatalog.search_items").fetchone() == (
            COLLECTIONS + 100,)
    again = run_cli("migrate", env={"DATABASE_URL": cf_database})
    assert again.returncode == 0, again.stderr[-2000:]
    assert "search index" not in again.stdout  # nothing left to do
