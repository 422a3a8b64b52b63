"""`geocatalog` command line: database lifecycle, loading (`loading`), serving (and on a
Patroni cluster of three members on loopback: `ha_demo`).

Third-party imports: `asyncpg`, `boto3`, `moto`, `psycopg`, `pydantic`, `rich`, `typer`,
`uvicorn`.
"""

from __future__ import annotations

import logging
import logging.config
import os
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from stac_ext.cli.common import _fail, _settings, _start, database_errors, ensure_database
from stac_ext.cli.demo_s3 import DEMO_DIR, demo_s3
from stac_ext.cli.images import images_app
from stac_ext.cli.loading import LoadRefused, counted, load_demo_proposals, load_path
from stac_ext.cli.results import results_app
from stac_ext.cli.thumbnails import thumbnails
from stac_ext.cli.vocabulary import vocabulary_app
from stac_ext.platform.access import VISIBILITIES
from stac_ext.platform.database import readiness
from stac_ext.platform.database.cluster import Cluster, ClusterError
from stac_ext.platform.database.loader import LoadMethod
from stac_ext.platform.database.migrations import migrate as run_migrations
from stac_ext.platform.service.logs import logging_config
from stac_ext.settings import Settings

# plain help (click's): a flag shows no type, a docstring's lines are joined, not kept
app = typer.Typer(help="geocatalog: STAC API + OGC API Processes on pgstac.",
                  rich_markup_mode=None, no_args_is_help=True)
db_app = typer.Typer(help="The embedded PostgreSQL cluster (when DATABASE_URL is unset).",
                     no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(images_app, name="images")
app.add_typer(results_app, name="results")
app.add_typer(vocabulary_app, name="vocabulary")



def _processes_defined(settings: Settings) -> None:
    """A process definition file that cannot be used stops the start in one line."""
    from process_api import DefinitionError, load_definitions

    try:
        load_definitions(settings.process_definitions)
    except DefinitionError as e:
        raise _fail(f"PROCESS_DEFINITIONS: {e}", code=2) from None


def _sandbox_ready(settings: Settings) -> None:
    """Jobs run in their sandbox (and on Slurm, as set), or the start stops in one line
    saying how to get it."""
    from process_api import Sandbox, SandboxError, SlurmError, slurm_site

    try:
        if settings.job_sandbox == "bwrap":
            Sandbox.available(hidden=[])
        slurm_site(settings)
    except (SandboxError, SlurmError) as e:
        raise _fail(f"JOB_SANDBOX: {e}" if isinstance(e, SandboxError) else str(e),
                    code=2) from None


def _embedded(settings: Settings) -> Cluster:
    if not settings.embedded:
        raise _fail("DATABASE_URL is set: the database is managed elsewhere.", code=2)
    return settings.cluster


@db_app.command("start")
def db_start() -> None:
    """Initialise (first time) and start the embedded cluster."""
    settings = _settings()
    _embedded(settings)
    typer.echo(_start(settings).status())


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded cluster (its data stays in GEOCATALOG_DATA_DIR)."""
    cluster = _embedded(_settings())
    cluster.stop()
    typer.echo(cluster.status())


@db_app.command("status")
def db_status() -> None:
    """Say whether the embedded cluster exists and runs. Exits 1 when it does not run."""
    cluster = _embedded(_settings())
    typer.echo(cluster.status())
    if not cluster.running():
        raise typer.Exit(1)


def migrate_all(settings: Settings) -> None:
    """Every package's migrations (imported here: they name the packages, whose import
    `geocatalog load` and `token` need not pay)."""
    from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS

    run_migrations(settings.dsn, MIGRATIONS, echo=typer.echo, bootstraps=BOOTSTRAPS)


@app.command("migrate")
def migrate_cmd() -> None:
    """Apply the database's migrations. pgstac's, the job engine's and geocatalog's, each
    once (running it again changes nothing)."""
    settings = _settings()
    ensure_database(settings)
    with database_errors(settings.dsn):
        migrate_all(settings)


def _loaded(settings: Settings, path: Path, method: LoadMethod, owner: str | None = None,
            workers: int = 1, visibility: str | None = None,
            project: str | None = None) -> tuple[int, int]:
    """`load_path`, a refusal as one line and exit 1."""
    try:
        return load_path(settings, path, method, owner, workers, visibility, project)
    except LoadRefused as e:
        raise _fail(str(e)) from None


#: Who reads an item (`properties.visibility`), as the option takes it.
Visibility = StrEnum("Visibility", {name: name for name in VISIBILITIES})  # type: ignore[misc]


LoadMethodOption = Annotated[LoadMethod, typer.Option(
    metavar="[insert|upsert|ignore]",
    help="for ids that exist already: insert (refuse them), upsert (replace), ignore (keep "
         "what is stored)")]


@app.command("load")
def load_cmd(
    path: Annotated[Path, typer.Argument(
        metavar="PATH", help="ndjson, STAC JSON, or a static catalog")],
    method: LoadMethodOption = LoadMethod.insert,
    owner: Annotated[str | None, typer.Option(
        metavar="USER", help="set every item's owner (properties.owner); without it, "
        "only administrators may change the loaded items")] = None,
    workers: Annotated[int, typer.Option(
        min=1, max=64, metavar="N",
        help="processes loading items at once (whole collections each)")] = 2,
    visibility: Annotated[Visibility | None, typer.Option(
        metavar="[private|project|public]",
        help="set every item's visibility: public, private (its owner and administrators), "
             "project (the members of --project)")] = None,
    project: Annotated[str | None, typer.Option(
        metavar="GROUP",
        help="the project (group) whose members read the items (--visibility project)")]
        = None,
) -> None:
    """Load collections and items in bulk, through pypgstac's loader."""
    if (visibility == "project") != (project is not None):
        raise _fail("--visibility project and --project go together: the project names "
                    "the group whose members read the items.")
    settings = _settings()
    ensure_database(settings)
    with database_errors(settings.dsn):
        collections, items = _loaded(settings, path, method, owner, workers,
                                     visibility and visibility.value, project)
    kept = ", those already stored kept as they were" if method is LoadMethod.ignore else ""
    typer.echo(f"loaded {counted(collections, 'collection')} and {counted(items, 'item')} "
               f"from {path}{kept}")


@app.command("demo-data")
def demo_data(method: LoadMethodOption = LoadMethod.upsert) -> None:
    """Load the demo data set kept in the repository."""
    settings = _settings()
    ensure_database(settings)
    loaded = [_loaded(settings, DEMO_DIR / name, method)
              for name in ("collections.json", "items.ndjson")]
    proposals = load_demo_proposals(settings, DEMO_DIR / "proposals.json")
    typer.echo(f"loaded the demo data: {counted(sum(c for c, _ in loaded), 'collection')} "
               f"and {counted(sum(i for _, i in loaded), 'item')} (collections without "
               "items are not listed by /data/collections), and "
               f"{counted(proposals, 'open proposal')}")


def _catalog_is_empty(dsn: str) -> bool:
    import psycopg

    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT NOT EXISTS (SELECT 1 FROM pgstac.collections)").fetchone()
        return bool(row and row[0])


@app.command("token")
def token(
    user: Annotated[str, typer.Argument(metavar="USER",
                                        help="user name (preferred_username)")],
    group: Annotated[list[str] | None, typer.Option(
        metavar="GROUP", help="a group (project); repeatable")] = None,
    right: Annotated[list[str] | None, typer.Option(
        metavar="RIGHT", help="a right (role); repeatable")] = None,
    client: Annotated[str | None, typer.Option(
        metavar="ID", help="client id [default: DATA_CLIENT_ID]; WEB_CLIENT_ID's token "
        "serves both APIs, as a sign-in's")] = None,
    ttl: Annotated[int, typer.Option(metavar="SECONDS", help="lifetime", min=1)] = 3600,
) -> None:
    """Print a token of the local development issuer. It is the issuer of the server
    that runs with the same GEOCATALOG_DATA_DIR."""
    if not user.strip():
        raise typer.BadParameter("a user name, which the token names", param_hint="USER")
    from stac_ext.platform.auth.local_issuer import LocalIssuer

    settings = _settings()
    if not settings.local_issuer:
        raise _fail("OIDC_ISSUER/JWKS_URL is set: get tokens from that identity provider.")
    if not settings.issuer_key_file.exists():  # making one here would sign for nobody
        raise _fail(f"No development issuer key at {settings.issuer_key_file}: run this where "
                    "the server runs, or set GEOCATALOG_DATA_DIR to the server's data dir.")
    issuer = LocalIssuer(settings.issuer_key_file, _served_issuer(settings))
    client = client or settings.data_client_id
    audience = settings.api_audiences if client == settings.web_client_id else None
    typer.echo(issuer.mint(user, client, group, right, ttl, audience))


def _served_issuer(settings: Settings) -> str:
    """The issuer URL the server last started with (`serve` writes it), so that tokens are
    accepted whatever --port it was given; else the one the settings make."""
    issuer = settings.local_issuer
    assert issuer is not None
    served = settings.issuer_url_file
    return served.read_text().strip() if served.exists() else issuer


def wait_for_migrations(settings: Settings, seconds: float) -> None:
    """Return once the database is migrated; one line and exit 3 after `seconds`."""
    from stac_ext.migration_sets import MIGRATIONS

    expected = readiness.expected(MIGRATIONS)
    deadline, told = time.monotonic() + seconds, ""
    while True:
        try:
            pending = readiness.check_sync(settings.worker_dsn, expected)
            why = f"the database is not migrated yet (pending: {', '.join(pending)})"
        except Exception as e:  # the database may not be up yet either
            pending, why = ["database"], f"the database does not answer ({type(e).__name__})"
        if not pending:
            return
        if time.monotonic() > deadline:
            raise _fail(f"{why}: run `geocatalog migrate` first.", code=3)
        if why != told:
            typer.echo(f"waiting: {why}; `geocatalog migrate` makes it ready", err=True)
            told = why
        time.sleep(1)


@app.command("worker")
def worker(
    concurrency: Annotated[int, typer.Option(metavar="N", help="jobs run at once")] = 2,
    name: Annotated[str | None, typer.Option(metavar="NAME",
                                             help="worker name (for logs)")] = None,
    wait: Annotated[float, typer.Option(
        metavar="SECONDS",
        help="how long to wait for the database to be migrated before giving up")] = 60,
) -> None:
    """Run jobs from the queue. Any number of workers, on any machines, share one
    database."""
    import asyncio

    from stac_ext.app import build_engine

    settings = _settings()
    _processes_defined(settings)
    _sandbox_ready(settings)
    logging.config.dictConfig(logging_config(settings.log_format))
    wait_for_migrations(settings, wait)

    from stac_ext.platform.telemetry.exposition import serve_port
    from stac_ext.platform.telemetry.readings import Readings, sampling
    from stac_ext.platform.telemetry.traces import configured_provider, instrument_libraries

    if (provider := configured_provider()) is not None:
        instrument_libraries(provider)
    if settings.worker_metrics_port is not None:
        serve_port(settings.worker_metrics_port, settings.metrics_host)

    async def run() -> None:
        async with build_engine(settings, dsn=settings.worker_dsn,
                                tracer_provider=provider) as engine, sampling(
                Readings(pools=[engine.pool_states], database=[engine.sample_queue]),
                settings.metrics_sample_seconds):
            await engine.run_worker(concurrency, install_signal_handlers=True, name=name)

    asyncio.run(run())


app.command("demo-s3")(demo_s3)
app.command("thumbnails")(thumbnails)


#: Where `serve` and `ha-demo` listen
HostOption = Annotated[str | None, typer.Option(
    metavar="HOST", help="address to listen on [default: GEOCATALOG_HOST, else 127.0.0.1]")]
PortOption = Annotated[int | None, typer.Option(
    metavar="PORT", help="port to listen on [default: GEOCATALOG_PORT, else 8080]")]


@app.command("serve")
def serve(
    host: HostOption = None,
    port: PortOption = None,
    workers: Annotated[int, typer.Option(metavar="N", help="uvicorn worker processes")] = 1,
) -> None:
    """Serve the APIs and the web pages. Ensures the database, migrates, and loads the
    demo data on first start."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from stac_ext.platform.service.manager import MANAGER_PID
    from stac_ext.platform.telemetry.exposition import multiprocess_files, serve_port

    # the app uvicorn builds reads its settings from the environment: it listens here
    if host is not None:
        os.environ["GEOCATALOG_HOST"] = host
    if port is not None:
        os.environ["GEOCATALOG_PORT"] = str(port)
    settings = _settings()
    _processes_defined(settings)
    if settings.in_process_worker:
        _sandbox_ready(settings)
    log_config = logging_config(settings.log_format)
    logging.config.dictConfig(log_config)
    ensure_database(settings)
    if settings.migrate_on_start:
        migrate_all(settings)
    if settings.demo_on_start and _catalog_is_empty(settings.dsn):
        demo_data(LoadMethod.upsert)
    if settings.local_issuer:  # `geocatalog token` signs for the issuer that runs
        settings.issuer_url_file.parent.mkdir(parents=True, exist_ok=True)
        settings.issuer_url_file.write_text(settings.local_issuer + "\n")
    typer.echo(f"serving http://{settings.geocatalog_host}:{settings.geocatalog_port}/data/")
    config = uvicorn.Config("stac_ext.app:create_app", factory=True,
                            host=settings.geocatalog_host, port=settings.geocatalog_port,
                            workers=workers, log_config=log_config)
    # the workers' metrics, added up by a scrape of any of them (or of METRICS_PORT)
    with multiprocess_files():
        if settings.metrics and settings.metrics_port is not None:
            serve_port(settings.metrics_port, settings.metrics_host)
        # uvicorn's worker manager, even for one worker: a worker that dies (a crash in a
        # native library, a kill) is started again on the same socket; the service stays up.
        # Its workers end with it (`end_with_manager`): the service's supervisor restarts it.
        os.environ[MANAGER_PID] = str(os.getpid())
        Multiprocess(config, sockets=[config.bind_socket()]).run()


@app.command("ha-demo")
def ha_demo(
    host: HostOption = None,
    port: PortOption = None,
) -> None:
    """Serve on a Patroni cluster of three members on loopback. etcd and Patroni (Debian's
    packages) in GEOCATALOG_DATA_DIR/ha; Ctrl-C stops the service, then the cluster."""
    from stac_ext.cli.ha_demo import demo_cluster

    try:
        with demo_cluster(_settings().data_dir) as environment:
            os.environ.update(environment)
            serve(host=host, port=port, workers=1)
    except ClusterError as e:
        raise _fail(str(e)) from None

