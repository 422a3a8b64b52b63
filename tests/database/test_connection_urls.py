"""URLs that name a cluster: several hosts, the primary for every part that writes, a
replica where one answers for the data API's reads; one host as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stac_ext.platform.database.connection_urls import (
    described,
    hosts,
    per_host,
    target_of,
    targeted,
)
from stac_ext.platform.database.settings import DatabaseSettings
from tests.support.cli import run_cli
from tests.support.http import free_port
from tests.support.stac import make_collection

pytestmark = pytest.mark.unit

CLUSTER = "postgresql://owner:s%40cret@db1:5432,db2:5433,db3/geocatalog"


def test_the_hosts_of_a_url() -> None:
    assert hosts(CLUSTER) == ["db1:5432", "db2:5433", "db3"]
    assert hosts("postgresql://u:p@db:5432/x") == ["db:5432"]
    assert hosts("host=db1,db2 dbname=x") == []  # libpq's key=value form: left alone


def test_a_url_once_per_host_and_its_target() -> None:
    query = "?sslmode=require&target_session_attrs=read-write"
    assert per_host(CLUSTER + query) == [
        f"postgresql://owner:s%40cret@{host}/geocatalog{query}"
        for host in ("db1:5432", "db2:5433", "db3")]
    assert target_of(CLUSTER + query) == "read-write"
    assert target_of(CLUSTER) == "any"
    assert per_host("host=db1,db2") == ["host=db1,db2"]


def test_a_cluster_url_gets_the_parts_target_unless_it_names_one() -> None:
    assert targeted(CLUSTER, "read-write") == f"{CLUSTER}?target_session_attrs=read-write"
    assert targeted(f"{CLUSTER}?sslmode=require", "prefer-standby") == (
        f"{CLUSTER}?sslmode=require&target_session_attrs=prefer-standby")
    own = f"{CLUSTER}?target_session_attrs=primary"
    assert targeted(own, "read-write") == own
    one = "postgresql://u:p@db:5432/x"
    assert targeted(one, "read-write") == one
    assert targeted("host=db1,db2 dbname=x", "read-write") == "host=db1,db2 dbname=x"


def test_a_url_described_without_its_password() -> None:
    assert described(CLUSTER) == "owner@db1:5432,db2:5433,db3/geocatalog"
    assert described("postgresql://db/x") == "db/x"
    assert described("host=db password=secret") == "the configured database"


def test_every_part_connects_to_the_primary_and_reads_prefer_a_replica() -> None:
    api = "postgresql://api:pw@db1:5432,db2:5432/geocatalog"
    settings = DatabaseSettings(database_url=CLUSTER, api_database_url=api,
                                database_reader_url=api)
    primary = "target_session_attrs=read-write"
    assert settings.dsn.endswith(primary) and settings.worker_dsn == settings.dsn
    assert settings.job_dsn == settings.dsn
    assert settings.api_dsn == f"{api}?{primary}" == settings.postgres.dsn
    assert settings.postgres_reader.dsn == f"{api}?target_session_attrs=prefer-standby"
    assert settings.postgres_reader.server_settings["pgstac.readonly"] == "true"
    assert "pgstac.readonly" not in settings.postgres.server_settings
    one = DatabaseSettings(database_url="postgresql://u:p@db:5432/x")
    assert one.dsn == one.api_dsn == one.postgres.dsn == one.postgres_reader.dsn == (
        "postgresql://u:p@db:5432/x")


def test_a_cluster_that_refuses_is_one_line_naming_every_host(tmp_path: Path) -> None:
    ports = [free_port(), free_port()]
    url = f"postgresql://owner:secret@127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}/geocatalog"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(make_collection("test_conv-refused")))
    out = run_cli("load", str(path), env={"DATABASE_URL": url})
    assert out.returncode == 1
    line = out.stderr.strip()
    assert line.startswith(f"cannot use the database 127.0.0.1:{ports[0]},127.0.0.1:"
                           f"{ports[1]}/geocatalog as owner: "), line
    assert "secret" not in line and "\n" not in line
