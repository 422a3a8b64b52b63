"""The service root: landing JSON linking the APIs; readiness at /healthz, and stock's
liveness and health under /data/_mgmt, each with its own meaning."""

import httpx
import psycopg
import pytest
from openapi_spec_validator import validate

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.migrations import migrate
from tests.support.cluster import new_database
from tests.support.stac import make_item


@pytest.fixture
async def demo_collection(admin_data: httpx.AsyncClient, alice_data: httpx.AsyncClient,
                          collection: str) -> str:
    """A collection with an item (listed by /collections)."""
    r = await alice_data.post(f"/data/collections/{collection}/items", json=make_item("f1"))
    assert r.status_code == 201, r.text
    return collection


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


async def test_readiness_names_unapplied_migrations(settings, service_app) -> None:
    """A database a newer release has not been migrated to yet is not ready (503)."""
    url = new_database(settings.database_url or "", "unmigrated_")
    migrate(url, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM geocatalog.schema_migrations WHERE schema_name = 'catalogs'")
    async with service_app(database=url) as service:
        r = await service.client().get("/healthz")
    assert r.status_code == 503
    assert r.json() == {"status": "DOWN", "pgstac": r.json()["pgstac"],
                        "pending_migrations": ["catalogs"]}


@pytest.mark.parametrize("path", ["/data/", "/data/collections", "/data/search?limit=2",
                                  "/data/collections/{c}", "/data/collections/{c}/items",
                                  "/data/conformance", "/data/catalogs", "/processes/processes",
                                  "/processes/conformance"])
async def test_f_json_is_accepted_everywhere(anon: httpx.AsyncClient, demo_collection: str,
                                             path: str) -> None:
    url = path.format(c=demo_collection)
    plain = await anon.get(url)
    with_f = await anon.get(url + ("&" if "?" in url else "?") + "f=json")
    assert (with_f.status_code, with_f.headers["content-type"]) == (
        plain.status_code, plain.headers["content-type"])
    assert plain.status_code == 200
    assert _without_volatile(with_f.json()) == _without_volatile(plain.json())


def _without_volatile(body: dict) -> dict:
    return {k: v for k, v in body.items() if k not in ("links", "timeStamp")}


async def test_an_unknown_f_is_400_in_each_apis_format(anon: httpx.AsyncClient) -> None:
    r = await anon.get("/data/collections?f=xml")
    assert (r.status_code, r.json()) == (400, {
        "code": "InvalidQueryParameter",
        "description": "Unknown output format f='xml': this endpoint answers f=json."})
    r = await anon.get("/processes/processes?f=yaml")
    assert (r.status_code, r.json()) == (400, {
        "type": "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/invalid-input",
        "title": "Bad Request", "status": 400,
        "detail": "Unknown output format f='yaml': this endpoint answers f=json."})


async def test_the_openapi_document_says_its_version(anon: httpx.AsyncClient) -> None:
    landing = (await anon.get("/data/")).json()
    [desc] = [link for link in landing["links"] if link["rel"] == "service-desc"]
    assert desc["type"] == "application/vnd.oai.openapi+json;version=3.1"
    r = await anon.get(desc["href"])
    assert r.headers["content-type"] == desc["type"]
    assert r.json()["openapi"].startswith("3.1")


async def test_a_client_that_reads_openapi_30_gets_it(anon: httpx.AsyncClient) -> None:
    """GDAL's and QGIS's OAPIF driver asks for 3.0 and reads no other: it got 3.1 ("Unexpected
    Content-Type"), and filtered every collection on the client. The data API claims the
    `oas30` class: a client asking for 3.0 only gets the document converted, valid 3.0."""
    gdal = ("application/vnd.oai.openapi+json;version=3.0, "
            "application/openapi+json;version=3.0, application/json")
    r = await anon.get("/data/api", headers={"Accept": gdal})
    assert (r.status_code, r.headers["content-type"]) == (
        200, "application/vnd.oai.openapi+json;version=3.0")
    document = r.json()
    assert document["openapi"] == "3.0.3"
    validate(document)  # openapi-spec-validator: the OpenAPI 3.0 schema, strictly
    assert set(document["paths"]) == set((await anon.get("/data/api")).json()["paths"])
    both = "application/vnd.oai.openapi+json;version=3.1, " + gdal
    r = await anon.get("/data/api", headers={"Accept": both})
    assert (r.headers["content-type"], r.json()["openapi"][:3]) == (
        "application/vnd.oai.openapi+json;version=3.1", "3.1")


async def test_a_changed_function_file_is_pending_until_migrate_applies_it(settings,
                                                                           service_app) -> None:
    """A release that changes one SQL function (one file of `functions/`) finds the database
    not ready until `migrate` has applied that file, and only that file."""
    url = new_database(settings.database_url or "", "stale_functions_")
    migrate(url, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE geocatalog.schema_functions SET sha256 = 'an earlier release' "
                     "WHERE schema_name = 'geocatalog' AND file = 'search.sql'")
    async with service_app(database=url) as service:
        r = await service.client().get("/healthz")
    assert (r.status_code, r.json()["pending_migrations"]) == (503, ["geocatalog"])
    said: list[str] = []
    assert migrate(url, MIGRATIONS, echo=said.append, bootstraps=BOOTSTRAPS) == [
        "geocatalog functions search"]
    assert "applied geocatalog functions search" in said
    async with service_app(database=url) as service:
        assert (await service.client().get("/healthz")).status_code == 200
