"""What the `geocatalog` commands share: a failure said in one line (never a traceback),
the settings read or their errors said, the database's refusal said, the embedded cluster
started when there is no `DATABASE_URL`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from pydantic import ValidationError

from stac_ext.platform.database.cluster import Cluster, ClusterError
from stac_ext.platform.database.connection_urls import described
from stac_ext.settings import Settings


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(message, fg="red", err=True)
    return typer.Exit(code)


@contextmanager
def database_errors(dsn: str) -> Iterator[None]:
    """A database that refuses the connection (a wrong password, port or name) is one line
    naming the database tried, not a traceback."""
    import psycopg

    try:
        yield
    except psycopg.OperationalError as e:
        # libpq's text names the server again ("connection to server at ... failed: ")
        why = " ".join(str(e).split()).rsplit("failed: ", 1)[-1].removeprefix("FATAL: ")
        raise _fail(f"cannot use the database {_where(dsn)}: "
                    f"{why or type(e).__name__}") from None


def _where(dsn: str) -> str:
    """`host:port/db as user` (every host of a cluster's URL), never the password."""
    user, _, where = described(dsn).rpartition("@")
    hosts, _, path = where.partition("/")
    if "," not in hosts and ":" not in hosts:  # libpq's default port
        hosts += ":5432"
    return f"{hosts}/{path} as {user}" if user else f"{hosts}/{path}"


def _settings() -> Settings:
    """The settings, or one line per configuration error (exit 2), never a traceback."""
    try:
        return Settings()
    except ValidationError as e:
        lines = [f"{'.'.join(map(str, err['loc'])).upper() or 'configuration'}: "
                 f"{err['msg'].removeprefix('Value error, ')}" for err in e.errors()]
        raise _fail("\n".join(lines), code=2) from None


def _start(settings: Settings) -> Cluster:
    """The embedded cluster started: on its port, or on a free one when another holds it
    (said in a line: the data dir remembers it)."""
    wanted = settings.cluster
    cluster = settings.cluster_to_start()
    for _ in range(3):
        if cluster.port != wanted.port:
            typer.echo(f"port {wanted.port} is in use (another PostgreSQL, perhaps another "
                       f"checkout's embedded database): the embedded database starts on "
                       f"port {cluster.port}, which {cluster.port_file} remembers "
                       "(GEOCATALOG_PG_PORT chooses another)", err=True)
        try:
            cluster.start()
            return cluster
        except ClusterError as e:
            moved = settings.cluster_elsewhere(cluster)
            if moved is None:
                raise _fail(str(e)) from e
            wanted, cluster = cluster, moved
    raise _fail(f"no free port for the embedded database (the last tried: {cluster.port})")


def ensure_database(settings: Settings) -> None:
    """Start the embedded cluster when there is no DATABASE_URL."""
    if settings.embedded:
        _start(settings)
