"""The `geocatalog` command line against a real database."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pystac
import pytest

from tests.support.http import free_port
from tests.support.stac import make_collection, make_item, unique


def geocatalog(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stac_ext.cli", *args],
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def db_env(database_url: str) -> dict[str, str]:
    return {"DATABASE_URL": database_url}


def test_migrate_is_idempotent(db_env: dict[str, str]) -> None:
    out = geocatalog("migrate", env=db_env)
    assert out.returncode == 0, out.stderr
    assert "applied" not in out.stdout
    assert "pgstac 0.10" in out.stdout and "(up to date)" in out.stdout


def _item_doc(collection: str, item_id: str) -> dict:
    doc = make_item(item_id, collection_id=collection)
    doc["stac_version"] = "1.0.0"
    doc["bbox"] = [0, 0, 1, 1]
    doc["links"] = []
    return doc


async def test_load_ndjson_with_methods(alice_data: httpx.AsyncClient, db_env, tmp_path: Path):
    collection = unique("test_conv-loaded_")
    path = tmp_path / "data.ndjson"
    lines = [make_collection(collection)] + [_item_doc(collection, f"n{n}") for n in range(5)]
    path.write_text("\n".join(json.dumps(doc) for doc in lines))

    out = geocatalog("load", str(path), env=db_env)
    assert out.returncode == 0, out.stderr
    assert "loaded 5 items" in out.stdout
    page = (await alice_data.get(f"/data/collections/{collection}/items?limit=100")).json()
    assert sorted(f["id"] for f in page["features"]) == [f"n{n}" for n in range(5)]

    assert geocatalog("load", str(path), env=db_env).returncode != 0  # insert: duplicates
    changed = [_item_doc(collection, "n0")]
    changed[0]["properties"]["title"] = "changed"
    path.write_text(json.dumps(changed[0]))
    assert geocatalog("load", str(path), "--method", "ignore", env=db_env).returncode == 0
    got = (await alice_data.get(f"/data/collections/{collection}/items/n0")).json()
    assert "title" not in got["properties"]
    assert geocatalog("load", str(path), "--method", "upsert", env=db_env).returncode == 0
    got = (await alice_data.get(f"/data/collections/{collection}/items/n0")).json()
    assert got["properties"]["title"] == "changed"


async def test_load_static_catalog_folder(alice_data: httpx.AsyncClient, db_env, tmp_path: Path):
    collection_id = unique("test_conv-static_")
    catalog = pystac.Catalog("root", "a static catalog")
    collection = pystac.Collection.from_dict(make_collection(collection_id))
    catalog.add_child(collection)
    for n in range(3):
        collection.add_item(pystac.Item.from_dict(_item_doc(collection_id, f"s{n}")))
    catalog.normalize_and_save(str(tmp_path / "stac"), pystac.CatalogType.SELF_CONTAINED)

    out = geocatalog("load", str(tmp_path / "stac"), env=db_env)
    assert out.returncode == 0, out.stderr
    page = (await alice_data.get(f"/data/collections/{collection_id}/items")).json()
    assert sorted(f["id"] for f in page["features"]) == ["s0", "s1", "s2"]


def test_load_reports_bad_input(db_env, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"type": "Feature", "id": "orphan"}')
    out = geocatalog("load", str(path), env=db_env)
    assert out.returncode == 1
    assert "names no collection" in out.stderr
    out = geocatalog("load", str(tmp_path / "missing.json"), env=db_env)
    assert out.returncode == 1 and "no such file" in out.stderr


@pytest.fixture
def world_readable_dir() -> Iterator[Path]:
    """A temp dir the `postgres` system user can reach (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="geocatalog-cli-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_embedded_cluster_lifecycle_and_demo_data(world_readable_dir: Path) -> None:
    tmp_path = world_readable_dir
    env = {"GEOCATALOG_DATA_DIR": str(tmp_path / "data"),
           "GEOCATALOG_PG_PORT": str(free_port()), "DATABASE_URL": ""}
    assert "not initialised" in geocatalog("db", "status", env=env).stdout
    try:
        out = geocatalog("db", "start", env=env)
        assert out.returncode == 0, out.stderr
        assert "running" in out.stdout and "127.0.0.1" in out.stdout
        out = geocatalog("migrate", env=env)
        assert out.returncode == 0 and "applied geocatalog 001" in out.stdout, out.stderr
        out = geocatalog("demo-data", env=env)
        assert out.returncode == 0, out.stderr
        password = (tmp_path / "data" / "pg.password")
        assert oct(password.stat().st_mode)[-3:] == "600"
    finally:
        out = geocatalog("db", "stop", env=env)
    assert "stopped" in out.stdout
