"""The service root: landing JSON linking the APIs; readiness at /healthz, and stock's
liveness and health under /data/_mgmt, each with its own meaning."""

import httpx
import psycopg

from stac_ext.app import create_app
from stac_ext.database.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.database.migrations import migrate
from tests.support.http import http_client


async def test_landing_links_data_api(alice_data: httpx.AsyncClient) -> None:
    r = await alice_data.get("/")
    assert r.status_code == 200
    hrefs = {link["rel"]: link["href"] for link in r.json()["links"]}
    assert hrefs == {"self": "http://testserver/", "data": "http://testserver/data/",
                     "processes": "http://testserver/processes/"}
    assert (await alice_data.get(hrefs["data"])).json()["type"] == "Catalog"


async def test_readiness_reports_database_and_schemas(anon: httpx.AsyncClient) -> None:
    r = await anon.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "UP", "pgstac": r.json()["pgstac"]}
    assert r.json()["pgstac"].startswith("0.10")
    assert (await anon.get("/data/_mgmt/ping")).json() == {"message": "PONG"}
    health = await anon.get("/data/_mgmt/health")
    assert health.status_code == 200 and health.json()["status"] == "UP"


async def test_readiness_names_unapplied_migrations(settings) -> None:
    """A database a newer release has not been migrated to yet is not ready (503)."""
    name = "unmigrated_readiness"
    admin_url = (settings.database_url or "").rsplit("/", 1)[0] + "/postgres"
    url = admin_url.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    migrate(url, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM geocatalog.schema_migrations WHERE schema_name = 'catalogs'")
    app = create_app(settings.model_copy(update={"database_url": url}))
    async with app.router.lifespan_context(app), http_client(app) as c:
        r = await c.get("/healthz")
    assert r.status_code == 503
    assert r.json() == {"status": "DOWN", "pgstac": r.json()["pgstac"],
                        "pending_migrations": ["catalogs"]}
