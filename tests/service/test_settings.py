"""Settings by concern: each package's class reads its own variables, the composition root
reads them all once, and importing the service changes nothing of its environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from stac_ext.platform.auth.settings import AuthSettings
from stac_ext.platform.database.settings import DatabaseSettings
from stac_ext.publish.settings import PublishSettings
from stac_ext.settings import CONCERNS, Settings
from tests.support.paths import ROOT

IMPORT_ALL = """
import json, os, sys
before = dict(os.environ)
import stac_ext.app, stac_ext.cli, stac_ext.publish.run
print(json.dumps({k: v for k, v in os.environ.items() if before.get(k) != v}))
"""


def test_importing_the_service_changes_no_variable_and_warns_nothing() -> None:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root")}
    out = subprocess.run([sys.executable, "-c", IMPORT_ALL], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == {}
    # stock's import-time settings warn of their defaults; ours are handed to its clients
    assert out.stderr == ""


def test_reading_the_settings_starts_no_web_framework() -> None:
    # every CLI command reads them first: `geocatalog load` once a file, 0.4 s a start when
    # the packages' settings pulled in FastAPI, the HTTP client and the token library
    code = ("import json, sys, stac_ext.settings; print(json.dumps(sorted(m for m in "
            "('fastapi', 'httpx', 'joserfc', 'jinja2', 'asyncpg') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == []


def test_the_composed_settings_are_every_concern() -> None:
    settings = Settings(database_url="postgresql://u@127.0.0.1/d", data_client_id="data")
    assert all(isinstance(settings, concern) for concern in CONCERNS)
    # each field belongs to one concern's declaration (the settings reference's tables)
    declared = [name for concern in CONCERNS for name in concern.__annotations__
                if name in Settings.model_fields]
    assert len(declared) == len(set(declared))


def test_a_concern_reads_only_its_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://owner:secret@db/catalog")
    monkeypatch.setenv("DATA_CLIENT_ID", "data-client")
    monkeypatch.setenv("PUBLISH_COLLECTION_PROJECTS", "ocean, ice")
    monkeypatch.setenv("BASE_URL", "https://geo.example.org/catalog/")
    publishing = PublishSettings()
    # a job of publish-dataset reads no database URL of the service, nor its identity
    assert not hasattr(publishing, "database_url") and not hasattr(publishing, "data_client_id")
    assert publishing.publish_collection_projects == ["ocean", "ice"]
    assert (publishing.base_url, publishing.prefix_path) == (
        "https://geo.example.org/catalog", "/data")
    assert DatabaseSettings().dsn == "postgresql://owner:secret@db/catalog"
    assert AuthSettings().data_client_id == "data-client"


def test_demo_data_goes_only_where_asked_or_into_the_embedded_cluster(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("LOAD_DEMO_DATA", raising=False)
    named = "postgresql://owner:secret@db/catalog"
    assert [Settings(database_url=url, load_demo_data=asked).demo_on_start
            for url, asked in ((None, None), (named, None), (named, True), (None, False))
            ] == [True, False, True, False]


def test_a_bad_secret_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValueError) as refused:
        Settings(job_secrets_key="not-a-key-but-a-secret")
    assert "must be 32 random bytes" in str(refused.value)
    assert "not-a-key-but-a-secret" not in str(refused.value)


async def test_the_landing_page_states_the_configured_words(anon: httpx.AsyncClient) -> None:
    body = (await anon.get("/data/")).json()
    assert (body["id"], body["title"], body["description"]) == (
        "geocatalog", "geocatalog", "Geospatial data catalog (STAC API / OGC API Features)")
