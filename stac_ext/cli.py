"""`geocatalog` command line: database lifecycle, loading, serving."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from stac_ext.database.cluster import Cluster, ClusterError
from stac_ext.database.loader import LoadError, LoadMethod, load, read_stac
from stac_ext.database.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.database.migrations import migrate as run_migrations
from stac_ext.settings import Settings

app = typer.Typer(help="geocatalog: STAC API + OGC API Processes on pgstac.",
                  no_args_is_help=True)
db_app = typer.Typer(help="The embedded PostgreSQL cluster (when DATABASE_URL is unset).",
                     no_args_is_help=True)
app.add_typer(db_app, name="db")

DEMO_DIR = Path(__file__).parent / "demo"


def _embedded(settings: Settings) -> Cluster:
    if not settings.embedded:
        typer.echo("DATABASE_URL is set: the database is managed elsewhere.", err=True)
        raise typer.Exit(2)
    return settings.cluster


def _fail(message: str) -> typer.Exit:
    typer.secho(message, fg="red", err=True)
    return typer.Exit(1)


@db_app.command("start")
def db_start() -> None:
    """Initialise (first time) and start the embedded cluster."""
    cluster = _embedded(Settings())
    try:
        cluster.start()
    except ClusterError as e:
        raise _fail(str(e)) from e
    typer.echo(cluster.status())


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded cluster."""
    cluster = _embedded(Settings())
    cluster.stop()
    typer.echo(cluster.status())


@db_app.command("status")
def db_status() -> None:
    """Say whether the embedded cluster exists and runs."""
    typer.echo(_embedded(Settings()).status())


def ensure_database(settings: Settings) -> None:
    """Start the embedded cluster when there is no DATABASE_URL."""
    if settings.embedded:
        try:
            settings.cluster.start()
        except ClusterError as e:
            raise _fail(str(e)) from e


@app.command("migrate")
def migrate_cmd() -> None:
    """Apply pgstac's and geocatalog's migrations (idempotent)."""
    settings = Settings()
    ensure_database(settings)
    run_migrations(settings.dsn, MIGRATIONS, echo=typer.echo, bootstraps=BOOTSTRAPS)


def _load_path(settings: Settings, path: Path, method: LoadMethod) -> int:
    try:
        collections, items = read_stac(path)
    except LoadError as e:
        raise _fail(str(e)) from e
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns) as bar:
        task = bar.add_task(f"{path.name}: {len(collections)} collections, items",
                            total=len(items))
        load(settings.dsn, collections, items, method,
             progress=lambda n: bar.advance(task, n))
    return len(items)


@app.command("load")
def load_cmd(
    path: Annotated[Path, typer.Argument(help="ndjson, STAC JSON, or a static catalog")],
    method: Annotated[LoadMethod, typer.Option(help="on an existing id")] = LoadMethod.insert,
) -> None:
    """Bulk load collections and items through pypgstac's loader."""
    settings = Settings()
    ensure_database(settings)
    count = _load_path(settings, path, method)
    typer.echo(f"loaded {count} items from {path}")


@app.command("demo-data")
def demo_data(
    method: Annotated[LoadMethod, typer.Option()] = LoadMethod.upsert,
) -> None:
    """Load the demo data set kept in the repository."""
    settings = Settings()
    ensure_database(settings)
    for name in ("collections.json", "items.ndjson"):
        _load_path(settings, DEMO_DIR / name, method)


def _catalog_is_empty(dsn: str) -> bool:
    import psycopg

    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT NOT EXISTS (SELECT 1 FROM pgstac.collections)").fetchone()
        return bool(row and row[0])


@app.command("token")
def token(
    user: Annotated[str, typer.Argument(help="user name (preferred_username)")],
    group: Annotated[list[str] | None, typer.Option(help="a group (project); repeatable")] = None,
    right: Annotated[list[str] | None, typer.Option(help="a right (role); repeatable")] = None,
    client: Annotated[str | None, typer.Option(help="client id (default: DATA_CLIENT_ID)")] = None,
    ttl: Annotated[int, typer.Option(help="lifetime in seconds")] = 3600,
) -> None:
    """Print a token signed by the local development issuer."""
    from stac_ext.auth.local_issuer import LocalIssuer

    settings = Settings()
    if not settings.local_issuer:
        raise _fail("OIDC_ISSUER/JWKS_URL is set: get tokens from that identity provider.")
    issuer = LocalIssuer(settings.issuer_key_file, settings.local_issuer)
    typer.echo(issuer.mint(user, client or settings.data_client_id, group, right, ttl))


@app.command("worker")
def worker(
    concurrency: Annotated[int, typer.Option(help="jobs run at once")] = 2,
    name: Annotated[str | None, typer.Option(help="worker name (for logs)")] = None,
) -> None:
    """Run jobs from the queue (any number of workers, on any machine, one database)."""
    import asyncio

    from stac_ext.app import build_engine

    logging.basicConfig(level=logging.INFO)
    settings = Settings()

    async def run() -> None:
        async with build_engine(settings) as engine:
            await engine.run_worker(concurrency, install_signal_handlers=True, name=name)

    asyncio.run(run())


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8080,
    workers: Annotated[int, typer.Option(help="uvicorn worker processes")] = 1,
) -> None:
    """Ensure the database, migrate, load demo data on first start, and serve."""
    import uvicorn

    logging.basicConfig(level=logging.INFO)
    settings = Settings()
    ensure_database(settings)
    run_migrations(settings.dsn, MIGRATIONS, echo=typer.echo, bootstraps=BOOTSTRAPS)
    if settings.load_demo_data and _catalog_is_empty(settings.dsn):
        demo_data(LoadMethod.upsert)
    typer.echo(f"serving http://{host}:{port}/data/")
    uvicorn.run("stac_ext.app:create_app", factory=True, host=host, port=port,
                workers=workers)
if __name__ == "__main__":
    app()
