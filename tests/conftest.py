"""Test fixtures: a real PostgreSQL+PostGIS with pgstac, the real app over HTTP.

The database is a throwaway cluster started from the system binaries (temp dir, free
port), or the one named by GEOCATALOG_TEST_DATABASE_URL.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any

import httpx
import psycopg
import pytest

from process_api import SHIPPED
from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.database.migrations import migrate
from stac_ext.settings import Settings
from tests.support.cli import run_cli
from tests.support.cluster import migrated_cluster, new_database
from tests.support.http import Started, free_port, http_client, started_app, uvicorn_serving
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT, TestIssuer
from tests.support.processes import TEST_DEFINITIONS, TEST_PROCESSES
from tests.support.roles import role_settings
from tests.support.s3 import secured_s3_server
from tests.support.slurm import SlurmCluster, start_slurm
from tests.support.stac import CHECKS_COLLECTION, checks_collection, make_collection, unique

#: The S3 and HTTP servers of the tests are on loopback: let the processes reach them (the
#: job processes inherit this environment). Refusals are tested with a policy of their own.
os.environ["OUTBOUND_ALLOW"] = "127.0.0.0/8"
#: Tests make collections of conventions of their own (`test_conv-var_...`), which have no
#: vocabulary; a convention with one (`climate_forecast`) is checked all the same.
os.environ.setdefault("REQUIRE_VOCABULARY", "false")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A `unit` test asks for no database: the marker keeps what it says."""
    wrong = [item.nodeid for item in items if item.get_closest_marker("unit")
             and "database_url" in getattr(item, "fixturenames", ())]
    if wrong:
        raise pytest.UsageError(f"`unit` tests that ask for a database: {wrong}")


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    if url := os.environ.get("GEOCATALOG_TEST_DATABASE_URL"):
        migrate(url, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
        yield url
        return
    with migrated_cluster("geocatalog-test-") as cluster:
        yield cluster.dsn


@pytest.fixture(scope="session")
def issuer() -> Iterator[TestIssuer]:
    test_issuer = TestIssuer(free_port())
    test_issuer.start()
    yield test_issuer
    test_issuer.stop()


#: The explorer and notebook service of the tests' platform (generated links point there).
EXPLORER = "https://explorer.example/data-explorer?source={href}"
NOTEBOOKS = "https://notebooks.example/hub/user-redirect/lab?fromURL={href}"


@pytest.fixture(scope="session")
def settings(database_url: str, issuer: TestIssuer,
             tmp_path_factory: pytest.TempPathFactory) -> Settings:
    # each part connects as its own role, as with `make run`
    return Settings(database_url=database_url, **role_settings(database_url),
                    load_demo_data=False, oidc_issuer=issuer.url,
                    geocatalog_data_dir=tmp_path_factory.mktemp("data"),
                    job_heartbeat_seconds=0.5, job_stalled_seconds=3,
                    # tests run several jobs of one user at once, and many jobs in all
                    # (the quotas' own test sets the defaults' rule)
                    job_user_running=8, job_user_queued=100_000, job_project_queued=100_000,
                    process_definitions=[SHIPPED, TEST_DEFINITIONS],
                    # a platform with a data explorer and a notebook service
                    explorer_url_template=EXPLORER, notebook_url_template=NOTEBOOKS,
                    # one worker for the whole run: the session app's (it knows the
                    # test processes); other apps made in tests only submit
                    in_process_worker=False)


#: `service_app(**overrides)`: an async context manager of a started service.
ServiceApp = Callable[..., AbstractAsyncContextManager[Started]]


@pytest.fixture(scope="session")
def service_app(settings: Settings) -> ServiceApp:
    """`async with service_app(**overrides) as service:` the service built with the
    session's settings and `overrides` (`settings.model_copy(update=overrides)`; also
    `database=` another database's URL, `processes=` and `tracer_provider=`, `create_app`'s:
    the test processes by default), its lifespan run; `service.app`, and
    `service.client(token, ...)`: clients of it, closed when it stops."""
    return partial(started_app, settings, processes=TEST_PROCESSES)


@pytest.fixture(scope="session")
async def app(service_app: ServiceApp) -> AsyncIterator[Any]:
    """The session's service, with the one job worker of the run."""
    async with service_app(in_process_worker=True) as service:
        yield service.app


@pytest.fixture(scope="module")
async def database_app(service_app: ServiceApp, database: str) -> AsyncIterator[Any]:
    """The service (no job worker) on the module's own `database` (a fixture it defines)."""
    async with service_app(database=database) as service:
        yield service.app


@pytest.fixture
async def database_client(database_app) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(database_app) as client:
        yield client


@pytest.fixture
async def anon(app) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(app) as c:
        yield c


@pytest.fixture
async def alice_data(app, issuer: TestIssuer) -> AsyncIterator[httpx.AsyncClient]:
    """alice: a plain user of the data API."""
    async with http_client(app, issuer.token("alice")) as c:
        yield c


@pytest.fixture
async def bob_data(app, issuer: TestIssuer) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(app, issuer.token("bob")) as c:
        yield c


@pytest.fixture
async def admin_data(app, issuer: TestIssuer) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(app, issuer.token("root", rights=[ADMIN_RIGHT])) as c:
        yield c


@pytest.fixture
async def collection(admin_data: httpx.AsyncClient) -> str:
    """A fresh, empty collection."""
    collection_id = unique("test_conv-var_")
    r = await admin_data.post("/data/collections", json=make_collection(collection_id))
    assert r.status_code == 201, r.text
    return collection_id


#: The collections that tests publish into, made as an administrator does (publishing
#: holds the items of a collection not made yet in its proposal).
PUBLISHED_COLLECTIONS = ("climate_forecast-sea_surface_temperature",
                         "climate_forecast-air_temperature")


@pytest.fixture(scope="session")
async def published_collections(app, issuer: TestIssuer) -> tuple[str, ...]:
    async with http_client(app, issuer.token("root", rights=[ADMIN_RIGHT])) as admin:
        for collection_id in PUBLISHED_COLLECTIONS:
            r = await admin.post("/data/collections", json=make_collection(collection_id))
            assert r.status_code in (201, 409), r.text  # made already by another test
    return PUBLISHED_COLLECTIONS


@pytest.fixture(scope="session")
def live_server(settings: Settings) -> Iterator[str]:
    """A real uvicorn process serving the app (the session database) on a free port."""
    with uvicorn_serving(settings) as base:
        yield base


@pytest.fixture(scope="session")
def seeded_server(settings: Settings, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[str]:
    """A real uvicorn serving a database of its own with the demo data set and the
    `checks_collection`: what the external validators see does not depend on which tests
    ran before."""
    url = new_database(settings.database_url or "", "seeded_")
    seed = tmp_path_factory.mktemp("seed") / "checks.ndjson"
    seed.write_text("\n".join(json.dumps(doc) for doc in checks_collection()))
    for command in (["migrate"], ["demo-data"], ["load", str(seed)]):
        assert run_cli(*command, env={"DATABASE_URL": url}).returncode == 0, command
    with psycopg.connect(url, autocommit=True) as conn:
        # a numeric queryable: pgstac compares `quality` as a number, whatever the client
        # sends ("5" from stac-api-validator's command line)
        conn.execute("SET search_path TO pgstac, public")
        conn.execute(
            "INSERT INTO pgstac.queryables (name, collection_ids, definition, "
            "property_wrapper) VALUES ('quality', %s, '{\"type\": \"number\"}', 'to_float')",
            ([CHECKS_COLLECTION],))
    with uvicorn_serving(settings, DATABASE_URL=url) as base:
        yield base


@pytest.fixture
async def alice_processes(app, issuer: TestIssuer) -> AsyncIterator[httpx.AsyncClient]:
    """alice with a token of the process API, member of the project `ocean-lab`."""
    token = issuer.token("alice", client=PROCESS_CLIENT, groups=["ocean-lab"])
    async with http_client(app, token) as c:
        yield c


@pytest.fixture
def secured_s3() -> Iterator[tuple[str, dict]]:
    """An S3 server that checks credentials, with one bucket `secured` holding a NetCDF at
    `data/sst.nc`; its endpoint and wrong keys (a wrong secret)."""
    from stac_ext.publish.demo_files import netcdf_bytes

    with secured_s3_server("secured", {"data/sst.nc": netcdf_bytes()}) as (endpoint, keys):
        yield endpoint, {**keys, "secretAccessKey": "wrong-secret"}


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    """A one-node Slurm of the tests' own, shared by every module that runs jobs on it."""
    cluster = start_slurm()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3-compatible server on loopback (moto's server mode)."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()
