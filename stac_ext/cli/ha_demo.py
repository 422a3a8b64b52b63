"""`geocatalog ha-demo`: the service on a Patroni cluster of three members on loopback (one
etcd), every part connecting through the URL of all members: lose a member and watch the
service ride over it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from stac_ext.platform.database import roles
from stac_ext.platform.database.patroni_cluster import PatroniCluster


@contextmanager
def demo_cluster(data_dir: Path) -> Iterator[dict[str, str]]:
    """The cluster in `data_dir/ha` (its ports remembered there), started, and stopped
    after: the service's environment on it (each part as its own role, the data API's
    reads on a replica, the demo data loaded once)."""
    cluster = PatroniCluster(data_dir / "ha")
    typer.echo(f"starting etcd and three Patroni members in {cluster.root} ...")
    try:
        cluster.start()
        for member in cluster.members:
            typer.echo(f"  {member.name}: PostgreSQL on 127.0.0.1:{member.pg_port}, Patroni "
                       f"on {member.rest} (patronictl -c {member.config} list)")
        typer.echo("  lose the leader's machine: kill -9 its Patroni (patroni.pid) and its "
                   "PostgreSQL (pg/postmaster.pid) together")
        yield {"DATABASE_URL": cluster.url(), "API_DATABASE_URL": cluster.url(roles.API),
               "WORKER_DATABASE_URL": cluster.url(roles.WORKER),
               "JOB_DATABASE_URL": cluster.url(roles.JOB),
               "DATABASE_READER_URL": cluster.url(roles.API), "LOAD_DEMO_DATA": "true"}
    finally:
        typer.echo("stopping the cluster ...")
        cluster.stop()
