"""The upgrade paths docs/operators/migrations.md promises, each from a database made and
filled by the earlier shape, then `geocatalog migrate` as an operator runs it:

- a plain pgstac database of the previous minor release (pypgstac 0.9, from its own venv:
  `make test` installs it from tests/upgrade/tools), loaded by that release's loader;
- a database of geocatalog's previous release (its migrations as they were: this
  release added `processes` 004, and `geocatalog` 007 and 008, the items' words and
  aggregations), with items, catalogs and links written through the API and a job record
  as that release stored it.

Every item, collection, catalog link and job record is then intact and served, and
`migrate` run again has nothing to do.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg.types.json import Jsonb

from stac_ext.data_api.item_rules import ItemRules
from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.migrations import MigrationSet, migrate
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.issuer import PROCESS_CLIENT, TestIssuer
from tests.support.paths import ROOT
from tests.support.stac import make_collection, make_item, unique

pytestmark = pytest.mark.slow

PREVIOUS_PYPGSTAC = ROOT / ".tools" / "pypgstac-previous" / "bin" / "pypgstac"
#: The last version of each schema's migrations in geocatalog's previous release.
PREVIOUS_RELEASE = {"geocatalog": 6, "catalogs": 3, "processes": 3}
#: Its migrations, as it shipped them.
PREVIOUS_SQL = ROOT / "tests" / "upgrade" / "previous-release"
API = "http://testserver/data/"


@asynccontextmanager
async def serving(service_app, url: str, token: str | None = None
                  ) -> AsyncIterator[httpx.AsyncClient]:
    async with service_app(database=url, in_process_worker=False) as service:
        yield service.client(token)


def _migrate_cli(url: str) -> str:
    out = run_cli("migrate", env={"DATABASE_URL": url})
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def _old_pypgstac(*args: str) -> str:
    assert PREVIOUS_PYPGSTAC.exists(), "make test installs it (tests/upgrade/tools)"
    out = subprocess.run([str(PREVIOUS_PYPGSTAC), *args], capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def _stored(item: dict[str, Any]) -> dict[str, Any]:
    """What a served item must still say of what was loaded."""
    return {key: item[key] for key in ("id", "collection", "geometry", "assets")} | {
        "properties": {k: v for k, v in item["properties"].items()
                       if k not in ("created", "updated")}}


async def test_a_pgstac_database_of_the_previous_minor_release(settings, service_app, tmp_path,
                                                                issuer: TestIssuer) -> None:
    url = new_database(settings.database_url or "", "upgrade_pgstac_")
    assert _old_pypgstac("migrate", "--dsn", url).strip() == "0.9.12"
    collections = [make_collection(unique("test_conv-upgrade_")) for _ in range(3)]
    items = []
    for n in range(30):
        item = make_item(f"u-{n:02d}", collections[n % 3]["id"], x=n, day=1 + n % 28,
                         data="https://data.example/u.nc")
        item["properties"]["platform"] = f"buoy-{n % 4}"
        items.append(item)
    (tmp_path / "collections.ndjson").write_text(
        "\n".join(json.dumps(c) for c in collections))
    (tmp_path / "items.ndjson").write_text("\n".join(json.dumps(i) for i in items))
    for kind in ("collections", "items"):
        _old_pypgstac("load", kind, str(tmp_path / f"{kind}.ndjson"), "--dsn", url)

    out = _migrate_cli(url)
    assert "pgstac 0.9.12 -> 0.10.0" in out, out
    assert "applied processes 004_job_trace_context" in out, out

    async with serving(service_app, url) as client:
        for item in items:
            r = await client.get(f"/data/collections/{item['collection']}/items/{item['id']}")
            assert r.status_code == 200, r.text
            assert _stored(r.json()) == _stored(item)
        listed = (await client.get("/data/collections")).json()["collections"]
        assert {c["id"] for c in listed} >= {c["id"] for c in collections}
        r = await client.get("/data/search", params={
            "collections": ",".join(c["id"] for c in collections), "limit": 100})
        assert r.status_code == 200
        assert r.json()["numberMatched"] == 30
        assert {f["id"] for f in r.json()["features"]} == {i["id"] for i in items}
        r = await client.get("/data/search", params={"filter": "platform = 'buoy-1'",
                                                     "filter-lang": "cql2-text"})
        assert {f["id"] for f in r.json()["features"]} == {
            i["id"] for i in items if i["properties"]["platform"] == "buoy-1"}
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM geocatalog.search_items").fetchone() == (30,)

    again = _migrate_cli(url)
    assert "applied" not in again and "->" not in again, again


def _previous_release(tmp_path: Path) -> list[MigrationSet]:
    """Each migration set as the previous release shipped it (its files as they were:
    functions were defined in its migrations then)."""
    sets = []
    for current in MIGRATIONS:
        if current.schema not in PREVIOUS_RELEASE:  # a set added since: made by `migrate`
            continue
        shipped = PREVIOUS_SQL / current.schema
        assert current.latest > PREVIOUS_RELEASE[current.schema] == max(
            int(path.name[:3]) for path in shipped.glob("*.sql"))
        # its steps: the search index's (the variable families' came since)
        sets.append(MigrationSet(current.schema, shipped,
                                 current.steps if current.schema == "geocatalog" else ()))
    return sets


#: A job's record as the previous release wrote it (no trace context).
PREVIOUS_JOB = """
INSERT INTO processes.jobs (id, process_id, owner, project, status, message, progress,
                           inputs, resources, results, attempts, started, finished,
                           service_url, api_url, subscriber)
VALUES (%(id)s, 'echo', 'alice', NULL, 'successful', 'finished', 100,
        %(inputs)s, '{}', %(results)s, 1, now() - interval '1 minute', now(),
        'http://testserver/', 'http://testserver/processes/', NULL)
"""


async def test_a_database_of_the_previous_geocatalog_release(settings, service_app, tmp_path,
                                                             issuer: TestIssuer) -> None:
    url = new_database(settings.database_url or "", "upgrade_geocatalog_")
    migrate(url, _previous_release(tmp_path), echo=lambda _: None, bootstraps=BOOTSTRAPS)
    with psycopg.connect(url) as conn:
        assert conn.execute(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = "
            "'processes' AND column_name = 'trace_context'").fetchone() == (0,)

    # what the previous release's API wrote: a collection, alice's items, her catalogs
    # (in SQL: today's API reads and writes the shape the migrations below make)
    collection = unique("test_conv-release_")
    alice = issuer.token("alice")
    rules = ItemRules()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path TO pgstac, public")
        conn.execute("SELECT create_collection(%s::jsonb)",
                     (json.dumps(make_collection(collection)),))
        conn.execute("SELECT create_items(%s::jsonb)", (json.dumps(
            [rules.prepare(make_item(f"r-{n}", x=n), collection, "alice")
             for n in range(4)]),))
        campaign = conn.execute(
            "INSERT INTO catalogs.catalogs (id, path, description, owner) "
            "VALUES ('campaign', 'campaign', 'A campaign', 'alice') RETURNING pk").fetchone()
        leg = conn.execute(
            "INSERT INTO catalogs.catalogs (parent_pk, id, path, description, owner) "
            "VALUES (%s, 'leg-1', 'campaign/leg-1', 'Leg 1', 'alice') RETURNING pk",
            campaign).fetchone()
        conn.execute("INSERT INTO catalogs.links (catalog_pk, position, collection_id, "
                     "item_id, title) VALUES (%s, 1, %s, NULL, NULL), "
                     "(%s, 2, %s, 'r-1', 'The first'), (%s, 1, %s, 'r-2', NULL)",
                     (*campaign, collection, *campaign, collection, *leg, collection))
    job_id = str(uuid.uuid4())
    with psycopg.connect(url) as conn:
        conn.execute(PREVIOUS_JOB, {"id": job_id, "inputs": Jsonb({"message": "kept"}),
                                    "results": Jsonb({"message": "kept", "object": None})})

    out = _migrate_cli(url)
    for applied in ("processes 004_job_trace_context", "processes 005_job_logs",
                    "processes 006_deployed_processes", "processes 007_job_quotas",
                    "processes 008_process_ids_without_case", "processes 009_job_lineage",
                    "processes 010_job_batch",
                    "geocatalog 007_free_text",
                    "geocatalog 008_aggregate", "geocatalog 009_visibility",
                    "geocatalog 010_index_upkeep", "geocatalog 011_token_visibility",
                    "geocatalog 012_count_estimates", "geocatalog 013_owner_column",
                    "geocatalog 014_no_item_staging",
                    "geocatalog 015_owner_index_of_owned_items",
                    "geocatalog 016_time_place_index",
                    "catalogs 004_visibility", "catalogs 005_variable_families",
                    "governance 001_vocabularies", "governance 002_proposals"):
        assert f"applied {applied}" in out, out
    with psycopg.connect(url) as conn:  # rewritten (013) and vacuumed: index-only counts
        assert conn.execute(
            "SELECT relpages, relallvisible FROM pg_class "
            "WHERE oid = 'geocatalog.search_items'::regclass").fetchone() == (1, 1)

    async with serving(service_app, url, alice) as c:
        for n in range(4):  # every item, as written, public
            item = (await c.get(f"/data/collections/{collection}/items/r-{n}")).json()
            assert (item["id"], item["properties"]["owner"]) == (f"r-{n}", "alice")
            assert "visibility" not in item["properties"]
        async with serving(service_app, url) as anyone:  # and anyone reads them
            r = await anyone.get(f"/data/collections/{collection}/items")
            assert sorted(f["id"] for f in r.json()["features"]) == [f"r-{n}" for n in range(4)]
        top = (await c.get("/data/catalogs/campaign")).json()
        assert [(link["rel"], link["href"].removeprefix(API), link.get("title"))
                for link in top["links"] if link["rel"] in ("child", "item")] == [
            ("child", "catalogs/campaign/leg-1", None),
            ("child", f"collections/{collection}", None),
            ("item", f"collections/{collection}/items/r-1", "The first")]
        leg = (await c.get("/data/catalogs/campaign/leg-1")).json()
        assert [link["href"].removeprefix(API) for link in leg["links"]
                if link["rel"] == "item"] == [f"collections/{collection}/items/r-2"]
        scoped = await c.get("/data/catalogs/campaign/_search")
        assert sorted(f["id"] for f in scoped.json()["features"]) == [
            "r-0", "r-1", "r-2", "r-3"]
        # the items written before have their words (the collection's, here)
        words = await c.get("/data/search", params={"q": "release", "collections": collection})
        assert sorted(f["id"] for f in words.json()["features"]) == ["r-0", "r-1", "r-2", "r-3"]
    async with serving(service_app, url, issuer.token("alice", client=PROCESS_CLIENT)) as c:
        job = await c.get(f"/processes/jobs/{job_id}")
        assert job.status_code == 200, job.text
        assert job.json()["status"] == "successful"
        results = await c.get(f"/processes/jobs/{job_id}/results")
        assert results.status_code == 200
        assert results.json() == {"message": "kept", "object": None}
        # and the new shape takes new jobs (with their trace context column)
        r = await c.post("/processes/processes/echo/execution",
                         json={"processInputs": {"message": "new"}})
        assert r.status_code == 201, r.text

    again = _migrate_cli(url)
    assert "applied" not in again, again
