"""The login roles of the service's parts in the test clusters: settings and environments
that make each part connect as its own role, as `make run` does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from stac_ext.platform.database import roles
from stac_ext.platform.database.cluster import Cluster
from stac_ext.settings import Settings

#: The test clusters by port, for the login roles of their parts.
_CLUSTERS: dict[int, Cluster] = {}

#: Each part's setting, by role.
_PART_SETTINGS = {roles.API: "api_database_url", roles.WORKER: "worker_database_url",
                  roles.JOB: "job_database_url"}


def role_settings(database_url: str) -> dict[str, str | None]:
    """The parts' database URLs for a database of a test cluster: each part as its own
    role, as `make run` does (the owner everywhere for a database of unknown cluster)."""
    url = urlsplit(database_url)
    cluster = _CLUSTERS.get(url.port or 0)
    return {name: cluster.role_dsn(role, url.path.lstrip("/")) if cluster else None
            for role, name in _PART_SETTINGS.items()}


def role_env(database_url: str) -> dict[str, str]:
    """`role_settings` as the environment of a process."""
    return {name.upper(): value or "" for name, value in role_settings(database_url).items()}


def on_database(settings: Settings, database_url: str, **update: Any) -> Settings:
    """`settings` for another database (with its roles)."""
    return settings.model_copy(update={"database_url": database_url,
                                       **role_settings(database_url), **update})


@contextmanager
def known(cluster: Cluster) -> Iterator[None]:
    """While in the block, databases of `cluster` get its roles."""
    _CLUSTERS[cluster.port] = cluster
    try:
        yield
    finally:
        _CLUSTERS.pop(cluster.port, None)
