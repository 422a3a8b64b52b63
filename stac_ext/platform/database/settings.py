"""The database's settings: where it is, as which role each part connects, how much each
process takes of it, and how long a statement may run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from stac_ext.platform.database import roles
from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.database.connection_urls import PREFER_STANDBY, READ_WRITE, targeted


@dataclass(frozen=True)
class PoolSettings:
    """One asyncpg pool of the data API: where it connects (a URL of one host, or of
    several: a cluster) and what each of its sessions starts with; the rest as stock
    stac-fastapi-pgstac's `PostgresSettings` has it."""

    dsn: str
    server_settings: dict[str, str]
    min_size: int = 1
    max_size: int = 10
    max_queries: int = 50_000
    max_inactive_lifetime: float = 300.0


class DatabaseSettings(BaseSettings):
    """Database"""

    # errors never echo values: the URLs hold passwords
    model_config = SettingsConfigDict(extra="ignore", hide_input_in_errors=True,
                                      use_attribute_docstrings=True)

    database_url: str | None = None
    """PostgreSQL with PostGIS (`postgresql://user:pw@host:5432/db`), as the role that owns
    the schemas (migrations and bulk loads use it); unset: the embedded cluster in
    `GEOCATALOG_DATA_DIR/pg`. A cluster's members may be listed
    (`postgresql://user:pw@db1:5432,db2:5432,db3:5432/db`): each connection then finds the
    primary (`target_session_attrs=read-write` unless the URL names another), as every
    part's URL below does (see High availability)."""
    api_database_url: str | None = None
    """The API's (and its in-process worker's) own login role, granted `geocatalog_api`
    (see Database roles). Unset: the embedded cluster's role of that part; with
    `DATABASE_URL` set, `DATABASE_URL` itself."""
    worker_database_url: str | None = None
    """`geocatalog worker`'s own login role, granted `geocatalog_worker`; unset as for
    `API_DATABASE_URL`."""
    job_database_url: str | None = None
    """The role given to the processes of jobs that write to the catalog, granted
    `geocatalog_job`; unset as for `API_DATABASE_URL`."""
    database_reader_url: str | None = None
    """The data API's reads go to this PostgreSQL (a streaming replica, as the API's role),
    its writes to the API's URL (see Reads on replicas). Listing a cluster's members, reads
    go to a replica where one answers, else to the primary
    (`target_session_attrs=prefer-standby` unless the URL names another)."""
    geocatalog_data_dir: Path = Path(".data")
    """The embedded cluster (`pg/`) and its generated passwords (mode 0600), the development
    issuer's key and the job secrets key."""
    geocatalog_pg_port: int = 5439
    """Port of the embedded cluster (127.0.0.1 only). The data dir remembers the port its
    cluster last started on (`pg.port`), which later commands use when this is unset; unset
    and taken by something else (another checkout's embedded database), the cluster starts
    on a free port, which the data dir then remembers."""
    db_min_conn_size: int = 1
    """Connections each read and write pool of a process keeps open."""
    db_max_conn_size: int = 10
    """Connections each read and write pool of a process opens at most."""
    db_parallel_workers: int = 0
    """PostgreSQL parallel workers per query on the API's connections: a page query is small,
    and starting workers costs more than they save (see Performance)."""
    db_timeout: float = 2.0
    """Seconds a request waits for a database connection (connect or pool) before its 503:
    during an outage clients hear it at once and workers are not tied up (the job store and
    queue use the same bound)."""
    db_statement_timeout: float = Field(default=30.0, gt=0, le=3600)
    """Seconds a statement of the API may run before PostgreSQL cancels it: the request
    answers 504 (a slow query, not an outage), logged with its route."""
    search_count_max: int = Field(default=1_000, ge=0, le=10_000_000)
    """The matches a search counts at most for its `numberMatched`: up to this many it is
    their number, above it (or where the planner expects more) the page has none, never an
    estimate. A count then reads about as many rows as a page, however many items match;
    `/aggregate`'s `total_count` counts them all."""
    search_count_ttl: str = "10 seconds"
    """How long a query's `numberMatched` is reused before counting again: a count lags
    writes by at most this (a PostgreSQL interval; pgstac's own default is a day)."""
    migrate_on_start: bool = True
    """`serve` migrates first (as `DATABASE_URL`'s role); `false` where a one-shot
    `geocatalog migrate` does it and the API connects as its own role."""

    @property
    def data_dir(self) -> Path:
        return self.geocatalog_data_dir.resolve()

    @property
    def embedded(self) -> bool:
        """True when the service owns its database cluster."""
        return not self.database_url

    @property  # not cached: `model_copy(update=...)` would copy a stale value
    def postgres(self) -> PoolSettings:
        """The data API's write pool (and its read pool without a reader URL)."""
        return self._pool(self.api_dsn)

    @property
    def postgres_reader(self) -> PoolSettings:
        """The data API's read pool: a replica where one answers, when the reader URL
        lists several hosts."""
        return self._pool(targeted(self.database_reader_url, PREFER_STANDBY), replica=True) \
            if self.database_reader_url else self.postgres

    def _pool(self, dsn: str, replica: bool = False) -> PoolSettings:
        # on a replica pgstac must not cache searches (its `searches` table is read-only)
        more = {"pgstac.readonly": "true"} if replica else {}
        return PoolSettings(
            dsn=dsn, min_size=self.db_min_conn_size, max_size=self.db_max_conn_size,
            # geocatalog first: its `collection_search` (non-empty collections only)
            # answers stock stac-fastapi's unqualified call.
            server_settings={
                "search_path": "geocatalog,pgstac,public", "application_name": "geocatalog",
                "statement_timeout": str(int(self.db_statement_timeout * 1000)),
                # A page query is short: compiling it (PostgreSQL's JIT, on by default for
                # costly plans) takes longer than running it (docs/performance.md).
                "max_parallel_workers_per_gather": str(self.db_parallel_workers),
                "jit": "off", **more},
        )

    @property
    def cluster(self) -> Cluster:
        """The embedded cluster (used when `database_url` is unset), on the port its data
        dir remembers unless GEOCATALOG_PG_PORT says another."""
        cluster = Cluster(datadir=self.data_dir / "pg", port=self.geocatalog_pg_port)
        remembered = cluster.remembered_port()
        if remembered is None or "geocatalog_pg_port" in self.model_fields_set:
            return cluster
        return Cluster(datadir=cluster.datadir, port=remembered)

    def cluster_to_start(self) -> Cluster:
        """The embedded cluster to start: on its port, or, when something else holds that
        port and GEOCATALOG_PG_PORT does not name it, on a free one (remembered)."""
        if "geocatalog_pg_port" in self.model_fields_set:
            return self.cluster  # asked for: a port in use is said, not replaced
        return self.cluster.on_a_free_port()

    def cluster_elsewhere(self, tried: Cluster) -> Cluster | None:
        """The embedded cluster on another free port, when `tried` found its port taken as
        it started (another checkout's, started at the same moment, took the port both saw
        free) and GEOCATALOG_PG_PORT does not name it; else None."""
        if "geocatalog_pg_port" in self.model_fields_set:
            return None
        moved = tried.on_a_free_port()
        return None if moved is tried else moved

    @property
    def dsn(self) -> str:
        """The owner's database URL: configured (the primary's, when it lists several
        hosts), or the embedded cluster's."""
        return targeted(self.database_url, READ_WRITE) if self.database_url \
            else self.cluster.dsn

    def _part_dsn(self, configured: str | None, role: str) -> str:
        if configured:
            return targeted(configured, READ_WRITE)
        return self.dsn if self.database_url else self.cluster.role_dsn(role)

    @property
    def api_dsn(self) -> str:
        """The API's (and its in-process worker's) database URL."""
        return self._part_dsn(self.api_database_url, roles.API)

    @property
    def worker_dsn(self) -> str:
        """`geocatalog worker`'s database URL."""
        return self._part_dsn(self.worker_database_url, roles.WORKER)

    @property
    def job_dsn(self) -> str:
        """The database URL given to the process of a job that needs the database."""
        return self._part_dsn(self.job_database_url, roles.JOB)
