"""The contributors' recipes (docs/contributors/recipes.md), each followed as it is written,
in a temporary package or database, and seen to work: a process (a package of its own,
found by its entry point, run by a worker in its sandbox), a setting (a concern's class,
read from the environment, in the settings reference), a migration and a function file (a
schema of its own, applied once, the function file again when it changes) and a page (a
router and a template, reading the API as the caller)."""

from __future__ import annotations

import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import jinja2
import psycopg
import pytest
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.migrations import MigrationSet, migrate
from stac_ext.settings import CONCERNS, Settings
from stac_ext.web.public_api import get_json
from stac_ext.web.templating import page, templates
from tests.support.cluster import new_database
from tests.support.issuer import PROCESS_CLIENT, TestIssuer
from tests.support.jobs import execute, wait_for
from tests.support.paths import ROOT
from tests.support.stac import make_collection, unique

DOCS = ROOT / "docs"

# -- Adding a process ------------------------------------------------------------------

GAUGE = '''\
"""`recipe-gauge`: the largest and the smallest of some numbers."""

from typing import Any

from process_api import Process
from process_api.processes.definition import Context
from process_api.processes.sections import RESOURCES


def run(inputs: dict[str, Any], context: Context) -> dict[str, Any]:
    numbers = inputs["numbers"]
    context.progress(50, "read")
    return {"largest": max(numbers), "smallest": min(numbers), "by": context.owner}


PROCESS = Process(
    id="recipe-gauge", version="1.0.0", title="Gauge",
    description="The largest and the smallest of some numbers.",
    inputs={"type": "object", "additionalProperties": False, "required": ["numbers"],
            "properties": {"numbers": {"type": "array", "items": {"type": "number"},
                                       "minItems": 1, "maxItems": 1000},
                           "resources": RESOURCES}},
    outputs={"type": "object", "properties": {"largest": {"type": "number"},
                                              "smallest": {"type": "number"},
                                              "by": {"type": "string"}}},
    entry="recipe_gauge.gauge:run",
)
'''


@pytest.fixture
def gauge_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package of its own, installed as pip installs one: its module and its entry point
    in the `geocatalog.processes` group. Its name."""
    package = tmp_path / "recipe_gauge"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "gauge.py").write_text(GAUGE)
    installed = tmp_path / "recipe_gauge-1.0.0.dist-info"
    installed.mkdir()
    (installed / "METADATA").write_text("Metadata-Version: 2.1\nName: recipe-gauge\n"
                                        "Version: 1.0.0\n")
    (installed / "entry_points.txt").write_text(
        "[geocatalog.processes]\nrecipe-gauge = recipe_gauge.gauge:PROCESS\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "recipe_gauge"
    for module in [name for name in sys.modules if name.startswith("recipe_gauge")]:
        del sys.modules[module]


@pytest.mark.slow  # a worker and its sandbox start
async def test_a_process_in_a_package_of_its_own_runs_as_a_built_in_does(
        service_app, issuer: TestIssuer, gauge_package: str) -> None:
    token = issuer.token("alice", client=PROCESS_CLIENT)
    async with service_app(job_queue=unique("recipe-"), in_process_worker=True) as service:
        client = service.client(token)
        listed = (await client.get("/processes/processes")).json()["processes"]
        assert "recipe-gauge" in {p["id"] for p in listed}
        described = (await client.get("/processes/processes/recipe-gauge")).json()
        assert described["inputs"]["required"] == ["numbers"]
        r = await execute(client, "recipe-gauge", {"numbers": []})
        assert (r.status_code, r.json()["type"].rsplit("/", 1)[1]) == (400, "invalid-input")
        r = await execute(client, "recipe-gauge", {"numbers": [3, -1.5, 7]})
        assert r.status_code == 201, r.text
        job = await wait_for(client, r.headers["Location"], "successful", "failed")
        assert job["status"] == "successful", job.get("message")
        results = await client.get(f"{r.headers['Location']}/results")
        assert results.json() == {"largest": 7, "smallest": -1.5, "by": "alice"}


# -- Adding a setting ------------------------------------------------------------------

class RecipeSettings(BaseSettings):
    """Widgets"""

    model_config = SettingsConfigDict(extra="ignore", use_attribute_docstrings=True)

    widget_count: int = Field(default=3, ge=1, le=100)
    """Widgets each process keeps ready."""


class WithRecipe(Settings, RecipeSettings):
    """`Settings` with the new concern among its bases."""


@pytest.mark.unit
def test_a_setting_is_read_from_the_environment_and_in_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIDGET_COUNT", "7")
    assert WithRecipe().widget_count == 7
    monkeypatch.setenv("WIDGET_COUNT", "0")
    with pytest.raises(ValidationError, match="widget_count"):
        WithRecipe()

    monkeypatch.syspath_prepend(str(DOCS / "hooks"))
    import settings_reference as reference

    monkeypatch.setattr(reference, "CONCERNS", (*CONCERNS, RecipeSettings))
    monkeypatch.setattr(reference, "Settings", WithRecipe)
    table = reference.settings_reference()
    assert "## Widgets\n`tests.service.test_recipes.RecipeSettings`" in table
    assert "| `WIDGET_COUNT` | `3` | Widgets each process keeps ready. |" in table
    assert reference.undocumented() == []


# -- Adding a migration or a function file ---------------------------------------------

@pytest.mark.slow  # a database migrated afresh
def test_a_schemas_migrations_run_once_and_its_function_files_when_they_change(
        database_url: str, tmp_path: Path) -> None:
    migrations, functions = tmp_path / "migrations", tmp_path / "functions"
    migrations.mkdir()
    functions.mkdir()
    (migrations / "001_widgets.sql").write_text(textwrap.dedent("""\
        CREATE SCHEMA recipe;
        CREATE TABLE recipe.widgets (id text PRIMARY KEY, size int NOT NULL);
        INSERT INTO recipe.widgets VALUES ('a', 1), ('b', 2);
        """))
    count = functions / "widgets.sql"
    count.write_text("CREATE OR REPLACE FUNCTION recipe.widget_total() RETURNS bigint\n"
                     "LANGUAGE sql STABLE AS $$ SELECT sum(size) FROM recipe.widgets $$;\n")
    sets = [*MIGRATIONS, MigrationSet("recipe", migrations, functions=functions)]
    url = new_database(database_url, "recipe_")

    def migrated() -> list[str]:
        return [line for line in migrate(url, sets, echo=lambda _: None, bootstraps=BOOTSTRAPS)
                if line.startswith("recipe")]

    def total() -> int:
        with psycopg.connect(url) as conn:
            return conn.execute("SELECT recipe.widget_total()").fetchone()[0]  # type: ignore[index]

    assert migrated() == ["recipe 001_widgets", "recipe functions widgets"]
    assert total() == 3
    assert migrated() == []
    count.write_text(count.read_text().replace("sum(size)", "sum(size) * 10"))
    assert migrated() == ["recipe functions widgets"]
    assert total() == 30
    (migrations / "002_more_widgets.sql").write_text(
        "INSERT INTO recipe.widgets VALUES ('c', 4);\n")
    assert migrated() == ["recipe 002_more_widgets"]
    assert total() == 70


@pytest.mark.unit
def test_every_migration_set_ships_its_sql() -> None:
    """The recipe's last step: each set's folders are package data (a wheel holds them)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]
    for migration_set in MIGRATIONS:
        for folder in (migration_set.directory, migration_set.functions):
            if folder is None:
                continue
            package = folder.resolve().relative_to(ROOT).parts[0]
            inside = folder.resolve().relative_to(ROOT / package)
            assert f"{inside}/*.sql" in data[package], (migration_set.schema, folder)


# -- Adding a page ---------------------------------------------------------------------

router = APIRouter()


@router.get("/ui/recipe/{collection_id}")
async def collection_card(collection_id: str, request: Request) -> HTMLResponse:
    """A collection as a card: read through the data API, as the caller."""
    status, body = await get_json(request, f"/data/collections/{collection_id}",
                                  authorization=request.headers.get("authorization"))
    return page(request, "recipe_card.html", {"collection": body or {}}, status_code=status)


HTML = {"Accept": "text/html"}
CARD = """{% extends "base.html" %}
{% block title %}{{ collection.title or "Not found" }} · {{ title }}{% endblock %}
{% block main %}
{% if status == 200 %}<h1>{{ collection.title }}</h1><p>{{ collection.description }}</p>
{% else %}<h1>{{ error_heading(collection, status) }}</h1>{% endif %}
{% endblock %}
"""


async def test_a_page_reads_the_api_and_renders_escaped(
        service_app, admin_data, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templates.env, "loader", jinja2.ChoiceLoader([
        jinja2.DictLoader({"recipe_card.html": CARD}), templates.env.loader]))
    collection = make_collection(unique("test_conv-card_"))
    collection["title"] = "Sea <script>alert(1)</script> ice"
    assert (await admin_data.post("/data/collections", json=collection)).status_code == 201
    async with service_app() as service:
        service.app.include_router(router, include_in_schema=False)
        browser = service.client()
        r = await browser.get(f"/ui/recipe/{collection['id']}", headers=HTML)
        missing = await browser.get("/ui/recipe/nothing-here", headers=HTML)
    assert (r.status_code, r.headers["content-type"]) == (200, "text/html; charset=utf-8")
    assert "<h1>Sea &lt;script&gt;alert(1)&lt;/script&gt; ice</h1>" in r.text
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert (missing.status_code, "<h1>Not found</h1>" in missing.text) == (404, True)
