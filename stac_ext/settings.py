"""All geocatalog settings: one pydantic-settings class read from the environment.

It extends stac-fastapi-pgstac's own `Settings`, so every stock variable
(`ENABLED_EXTENSIONS`, `USE_API_HYDRATE`, `CORS_ORIGINS`, ...) keeps working.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import unquote, urlsplit

from pydantic import Field, field_validator, model_validator
from pydantic_settings import NoDecode, SettingsConfigDict
from stac_fastapi.pgstac.config import PostgresSettings, ServerSettings
from stac_fastapi.pgstac.config import Settings as PgstacApiSettings

from process_api import SHIPPED as SHIPPED_DEFINITIONS
from stac_ext.database import roles
from stac_ext.database.cluster import Cluster

#: Stock stac-fastapi also reads these once, at import, into settings of its own, and warns
#: when they are its defaults: let it see ours (the class below sets the same values).
for _name, _value in {"STAC_FASTAPI_TITLE": "geocatalog",
                      "STAC_FASTAPI_DESCRIPTION": "Geospatial data catalog (STAC API / OGC API "
                                                  "Features)",
                      "STAC_FASTAPI_LANDING_ID": "geocatalog",
                      "STAC_FASTAPI_VERSION": "0.1.0"}.items():
    os.environ.setdefault(_name, _value)

#: How to make a JOB_SECRETS_KEY, for the error that asks for one.
MAKE_KEY = ("python3 -c 'import base64, secrets; "
            "print(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())'")

#: Keys of our extensions in stock's `extra_map`, for `ENABLED_EXTENSIONS` (besides stock's
#: keys and our search ones, `owner` and `single_value_lists`).
CATALOG_TREE = "catalog_tree"
PYTHON_EXAMPLE = "python_example"
HTML = "html"


class Settings(PgstacApiSettings):
    """Service settings; each field is the upper-case environment variable of its name."""

    # errors never echo values: some are secrets (JOB_SECRETS_KEY, DATABASE_URL)
    model_config = SettingsConfigDict(env_file=None, extra="ignore", hide_input_in_errors=True,
                                      use_attribute_docstrings=True)

    # Each field's docstring is its entry in the settings reference (docs/operators/
    # configuration.md, generated from this class: a field without one fails the docs test).

    database_url: str | None = None
    """PostgreSQL with PostGIS (`postgresql://user:pw@host:5432/db`), as the role that owns
    the schemas (migrations and bulk loads use it); unset: the embedded cluster in
    `GEOCATALOG_DATA_DIR/pg`."""
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
    its writes to the API's URL (see Reads on replicas)."""
    geocatalog_data_dir: Path = Path(".data")
    """The embedded cluster (`pg/`) and its generated passwords (mode 0600), the development
    issuer's key and the job secrets key."""
    geocatalog_pg_port: int = 5439
    """Port of the embedded cluster (127.0.0.1 only). The data dir remembers the port its
    cluster last started on (`pg.port`), which later commands use when this is unset."""
    db_min_conn_size: int = 1
    """Connections each read and write pool of a process keeps open."""
    db_max_conn_size: int = 10
    """Connections each read and write pool of a process opens at most."""
    db_parallel_workers: int = 0
    """PostgreSQL parallel workers per query on the API's connections: a page query is small
    and starting workers cost more than they saved (a bbox+datetime search: 53 ms -> 17 ms
    without)."""
    db_timeout: float = 2.0
    """Seconds a request waits for a database connection (connect or pool) before its 503:
    during an outage clients hear it at once and workers are not tied up (the job store and
    queue use the same bound)."""
    db_statement_timeout: float = Field(default=30.0, gt=0, le=3600)
    """Seconds a statement of the API may run before PostgreSQL cancels it: the request
    answers 504 (a slow query, not an outage), logged with its route."""

    base_url: str | None = None
    """Public URL of the service (e.g. `https://geo.example.org/catalog`); unset: links
    follow the request's `Host` / `Forwarded` / `X-Forwarded-Proto` / `-Host` headers."""
    geocatalog_host: str = "127.0.0.1"
    """Where `serve` listens (`--host` sets it too); the local development issuer's URL
    follows it when `BASE_URL` is unset."""
    geocatalog_port: int = 8080
    """The port `serve` listens on (`--port` sets it too)."""

    oidc_issuer: str | None = None
    """Identity provider (e.g. `https://keycloak.example/realms/geo`); its JWKS is found by
    OIDC discovery, cached, refetched once on an unknown `kid` (at most every 30 s). Unset
    (with `JWKS_URL`): the local development issuer."""
    jwks_url: str | None = None
    """JWKS location when discovery is not wanted (needs `OIDC_ISSUER`: `iss` is always
    checked)."""
    data_client_id: str = "geocatalog"
    """The client id tokens must carry (as `azp`, or among the audiences `aud`) for data
    writes."""
    process_client_id: str = "geocatalog-processes"
    """The client id tokens must carry (as `azp`, or in `aud`) for protected process
    endpoints."""
    admin_right: str = "manageCollections"
    """The right of administrators: collection writes, and any item."""
    deploy_right: str = "deployProcess"
    """The right to deploy processes through the process API (OGC API Processes Part 2)."""
    web_client_id: str = "geocatalog-web"
    """The web face's public OIDC client (code flow + PKCE), for our pages and STAC Browser;
    its tokens must name the data and process clients in `aud` (the local issuer's do)."""
    stac_browser_dir: Path = Path(__file__).resolve().parent.parent / ".web" / "stac-browser"
    """The STAC Browser build `make web` makes (`dist/`, `vendor/`); missing: `/browser/`
    answers 503 saying how to build it."""
    swagger_ui_dir: Path = Path(__file__).resolve().parent.parent / ".web" / "swagger-ui"
    """Swagger UI's files (`make web`), for both APIs' documentation pages."""

    generated_content: bool = True
    """Generated item content (extension URIs, example / explorer / notebook links); off
    only to measure what it costs (`make bench`)."""
    owner_search: bool = True
    """The `owner` search parameter; off only to measure what it costs."""
    explorer_url_template: str | None = None
    """The platform's data explorer, opening a Zarr / Parquet / CSV asset (`{href}`: the
    asset's address, URL-encoded), e.g. `https://explorer.example.org/?source={href}`; each
    such asset then links to it (`rel: explorer`). Unset: no explorer link."""
    notebook_url_template: str | None = None
    """The platform's notebook service, running a notebook example (`{href}`: the
    notebook's address), e.g. `https://hub.example.org/hub/user-redirect/lab?fromURL={href}`;
    each notebook example then links to it (`rel: notebook`). Unset: no notebook link."""

    in_process_worker: bool = True
    """`serve` runs a job worker in the API process."""
    worker_concurrency: int = 2
    """Jobs the in-process worker runs at once."""
    job_queue: str = "jobs"
    """The queue this API submits to and its workers take from."""
    extra_processes: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """More processes, besides the built-ins and the `geocatalog.processes` entry points:
    `module:NAME` of a Process or a list of them, comma-separated."""
    process_definitions: Annotated[list[Path], NoDecode] = Field(
        default_factory=lambda: [SHIPPED_DEFINITIONS])
    """Folders of processes defined as data (JSON files, each running a command),
    comma-separated; the shipped examples' folder by default (empty: none)."""
    publish_collection_projects: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["*"])
    """Projects whose `publish-dataset` jobs may create a missing `climate_forecast-*`
    collection (`*`: any job, personal ones too; empty: never)."""
    job_heartbeat_seconds: float = 2.0
    """How often a worker says it is alive."""
    sync_wait_seconds: float = Field(default=30.0, ge=0, le=600)
    """The longest an execution request with `Prefer: respond-sync` / `wait=N` waits for its
    job (a process declaring `sync`); then it answers 201 as for any job."""
    job_stalled_seconds: float = 10.0
    """A job whose worker is silent this long is failed or retried."""
    job_shutdown_seconds: float = Field(default=10.0, ge=0)
    """How long a stopping worker (SIGTERM, or the service's in-process worker at shutdown)
    lets its running jobs finish; then it ends them: each is queued again when its process
    allows a retry, else failed."""
    job_secrets_key: str | None = None
    """32 random bytes, base64url: encrypts secret inputs for the workers, shared by the API
    and every worker; unset: `GEOCATALOG_DATA_DIR/job-secrets.key` (one machine only).
    Anything else is refused at start in one line."""
    job_sandbox: Literal["bwrap", "none"] = "bwrap"
    """`bwrap`: every job's process in bubblewrap's sandbox (a read-only system, no data dir,
    no worker `/proc`, network only when its process declares it); `none` where jobs are
    isolated otherwise (e.g. one container per job). With `bwrap` missing, `serve` and
    `worker` refuse to start."""
    callback_timeout_seconds: float = Field(default=5.0, gt=0, le=60)
    """Seconds of each attempt of a job callback (`subscriber`)."""
    callbacks_in_flight: int = Field(default=16, ge=1, le=1000)
    """Callbacks a worker sends at once (the others wait their turn: a silent target costs
    that many connections)."""

    stac_fastapi_title: str = "geocatalog"
    """Stock stac-fastapi's landing page title."""
    stac_fastapi_description: str = "Geospatial data catalog (STAC API / OGC API Features)"
    """Stock stac-fastapi's landing page description."""
    stac_fastapi_landing_id: str = "geocatalog"
    """Stock stac-fastapi's landing page id."""
    prefix_path: str = "/data"
    """Where the data API is mounted."""
    processes_prefix: str = Field(default="/processes", pattern=r"^(/[A-Za-z0-9_.-]+)+$")
    """Where the process API is mounted."""
    openapi_url: str = "/data/api"
    """The data API's OpenAPI document."""
    docs_url: str = "/data/api.html"
    """The data API's documentation page (Swagger UI)."""
    enable_transactions_extensions: bool = True
    """Item and collection writes (stock's transaction extensions), on in this service."""
    use_api_hydrate: bool = True
    """Items are merged with their collection's base item in the API (pypgstac's merge), not
    in pgstac's PL/pgSQL (stock's default): most of the database time of a 100-item
    page."""
    rendered_items_mb: int = Field(default=16, ge=0)
    """MiB per API process of items kept as served, by the text pgstac stores them as (so
    never stale); `0`: every item rendered on every read."""
    stac_fastapi_version: str = "0.1.0"
    """The version the landing page states."""

    log_format: Literal["text", "json"] = "text"
    """`json`: one JSON object per line (`time`, `level`, `logger`, `message`,
    `request_id`, `exception`) for `serve` and `worker`."""
    metrics: bool = True
    """Prometheus metrics at `/metrics` (beside `/data` and `/processes`, not under them),
    or on `METRICS_PORT`; `false`: no request is counted and no metrics are served."""
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    """`serve` exposes the metrics on this port of `METRICS_HOST` instead of `/metrics` (a
    port a firewall keeps to the scraper)."""
    worker_metrics_port: int | None = Field(default=None, ge=1, le=65535)
    """`geocatalog worker` exposes its metrics (jobs run, their durations, the queue, its
    pools) on this port of `METRICS_HOST`; unset: none."""
    metrics_host: str = "127.0.0.1"
    """The address the metrics ports listen on."""
    metrics_sample_seconds: float = Field(default=5.0, gt=0)
    """How often each process reads its pools, its items kept as served and the job queue
    into the metrics' gauges (a scrape reads its own process's at once)."""
    search_count_ttl: str = "10 seconds"
    """How long pgstac reuses a query's `numberMatched` (exact up to 100,000 matches, then
    estimated) before counting again: a count lags writes by at most this (a PostgreSQL
    interval; pgstac's own default is a day)."""
    aggregation_properties: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["platform", "owner"])
    """Item properties counted by value in `/aggregate` (each `<property>_frequency`,
    beside the counts by collection and by time), comma-separated: the facets offered."""
    max_page_size: int = 10_000
    """Items per page at most: a larger `limit` is cropped to it."""
    max_body_bytes: int = 32 * 2**20
    """Request bodies above this size are refused with 413 (bulk loads go through
    `geocatalog load`)."""
    load_demo_data: bool = True
    """`serve` loads the demo set when the catalog has no collection."""
    migrate_on_start: bool = True
    """`serve` migrates first (as `DATABASE_URL`'s role); `false` where a one-shot
    `geocatalog migrate` does it and the API connects as its own role."""

    @field_validator("extra_processes", "publish_collection_projects", "aggregation_properties",
                     "process_definitions", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

    @field_validator("job_secrets_key")
    @classmethod
    def _secrets_key(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            size = len(base64.urlsafe_b64decode(value.strip() + "=" * (-len(value.strip()) % 4)))
        except (binascii.Error, ValueError):
            size = -1
        if size != 32:
            raise ValueError(f"must be 32 random bytes, base64url-encoded; make one with: "
                             f"{MAKE_KEY}")
        return value

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else value

    @model_validator(mode="after")
    def _issuer_with_jwks(self) -> Settings:
        if self.jwks_url and not self.oidc_issuer:
            raise ValueError("JWKS_URL needs OIDC_ISSUER too: tokens' `iss` is checked against it")
        return self

    @model_validator(mode="after")
    def _one_catalogs_extension(self) -> Settings:
        tree_on = self.enabled_extensions is None or CATALOG_TREE in self.enabled_extensions
        if self.enable_catalogs_extension and tree_on:
            raise ValueError(
                "ENABLE_CATALOGS_EXTENSION=true mounts stock's catalogs extension on "
                "/data/catalogs, where geocatalog's catalogs tree is: leave it unset (or "
                f"leave `{CATALOG_TREE}` out of ENABLED_EXTENSIONS)")
        return self

    @property
    def data_dir(self) -> Path:
        return self.geocatalog_data_dir.resolve()

    @property
    def local_issuer(self) -> str | None:
        """The development issuer's identifier, when no identity provider is configured."""
        if self.oidc_issuer or self.jwks_url:
            return None
        if self.base_url:
            return f"{self.base_url}/auth"
        host = "127.0.0.1" if self.geocatalog_host in ("0.0.0.0", "::", "") \
            else self.geocatalog_host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.geocatalog_port}/auth"

    @property
    def issuer_key_file(self) -> Path:
        return self.data_dir / "issuer-key.json"

    @property
    def issuer_url_file(self) -> Path:
        """Where `serve` notes the development issuer's URL, for `geocatalog token`."""
        return self.data_dir / "issuer-url"

    @property
    def job_secrets_key_file(self) -> Path:
        return self.data_dir / "job-secrets.key"

    @property
    def embedded(self) -> bool:
        """True when the service owns its database cluster."""
        return not self.database_url

    @property  # not cached: `model_copy(update=...)` would copy a stale value
    def postgres(self) -> PostgresSettings:
        """Connection settings of the data API's writes (and of its reads without a
        reader URL), stac-fastapi-pgstac's terms."""
        return self._postgres(self.api_dsn)

    @property
    def postgres_reader(self) -> PostgresSettings:
        """Connection settings of the data API's reads."""
        return self._postgres(self.database_reader_url, replica=True) \
            if self.database_reader_url else self.postgres

    def _postgres(self, dsn: str, replica: bool = False) -> PostgresSettings:
        url = urlsplit(dsn)
        # on a replica pgstac must not cache searches (its `searches` table is read-only)
        more = {"pgstac.readonly": "true"} if replica else {}
        return PostgresSettings(
            pguser=unquote(url.username or ""),
            pgpassword=unquote(url.password or ""),
            pghost=url.hostname or "127.0.0.1",
            pgport=url.port or 5432,
            pgdatabase=url.path.lstrip("/") or "postgres",
            db_min_conn_size=self.db_min_conn_size,
            db_max_conn_size=self.db_max_conn_size,
            # geocatalog first: its `collection_search` (non-empty collections only)
            # answers stock stac-fastapi's unqualified call.
            server_settings=ServerSettings(
                search_path="geocatalog,pgstac,public", application_name="geocatalog",
                statement_timeout=str(int(self.db_statement_timeout * 1000)),
                # any other PostgreSQL setting is allowed (extra="allow"). A page query is
                # short: compiling it (PostgreSQL's JIT, on by default for costly plans)
                # took longer than running it (12 ms of a 20 ms search).
                max_parallel_workers_per_gather=str(  # type: ignore[call-arg]
                    self.db_parallel_workers), jit="off",
                **more,
            ),
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

    @property
    def dsn(self) -> str:
        """The owner's database URL: configured, or the embedded cluster's."""
        return self.database_url or self.cluster.dsn

    def _part_dsn(self, configured: str | None, role: str) -> str:
        if configured:
            return configured
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
