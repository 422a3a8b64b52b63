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
    model_config = SettingsConfigDict(env_file=None, extra="ignore", hide_input_in_errors=True)

    # Database: unset means the embedded cluster in `{data_dir}/pg`. Its role owns the
    # schemas: migrations and bulk loads use it.
    database_url: str | None = None
    # Least privilege (README "Database roles"): the connection string of each part, as a
    # login role granted `geocatalog_api` / `geocatalog_worker` / `geocatalog_job`. Unset:
    # the embedded cluster's role of that part; with DATABASE_URL, that URL's role.
    api_database_url: str | None = None
    worker_database_url: str | None = None
    job_database_url: str | None = None
    # Reads on a replica: the data API's reads go to this (a PostgreSQL streaming replica,
    # as the API's role), its writes to the API's URL (README "Reads on replicas").
    database_reader_url: str | None = None
    geocatalog_data_dir: Path = Path(".data")
    geocatalog_pg_port: int = 5439
    db_min_conn_size: int = 1
    db_max_conn_size: int = 10
    # Parallel workers per query on the API's connections. 0: a page query is small and
    # starting workers cost more than it saved (a bbox+datetime search: 53 ms -> 17 ms).
    db_parallel_workers: int = 0
    # Seconds a request waits for a database connection (connect or pool) before its 503:
    # during an outage clients hear it at once and workers are not tied up.
    db_timeout: float = 2.0
    # Seconds a statement of the API may run before PostgreSQL cancels it: a request that
    # takes longer answers 504 (a slow query, not an outage), logged with its route.
    db_statement_timeout: float = Field(default=30.0, gt=0, le=3600)

    # Public address: unset means "from the request" (Host / X-Forwarded-* headers).
    base_url: str | None = None
    # Where `serve` listens (its --host / --port set them for the app it starts); the
    # local development issuer's URL follows them when BASE_URL is unset.
    geocatalog_host: str = "127.0.0.1"
    geocatalog_port: int = 8080

    # Identity (used from the identity issue on).
    oidc_issuer: str | None = None
    jwks_url: str | None = None
    data_client_id: str = "geocatalog"
    process_client_id: str = "geocatalog-processes"
    admin_right: str = "manageCollections"
    # The web face's public OIDC client (code flow + PKCE): its tokens must name the data and
    # process clients as audiences (README "In a browser"); the local issuer's do.
    web_client_id: str = "geocatalog-web"
    # The built STAC Browser (`make web`): `dist/` and `vendor/`.
    stac_browser_dir: Path = Path(__file__).resolve().parent.parent / ".web" / "stac-browser"
    # Swagger UI's files (`make web`), for both APIs' documentation pages.
    swagger_ui_dir: Path = Path(__file__).resolve().parent.parent / ".web" / "swagger-ui"

    # Generated content (extension URIs, example / explorer / notebook links) and the
    # `owner` search parameter; off only to measure what they cost (`make bench`).
    generated_content: bool = True
    owner_search: bool = True
    explorer_url_template: str = "https://explorer.example/data-explorer?source={href}"
    notebook_url_template: str = "https://notebooks.example/hub/user-redirect/lab?fromURL={href}"

    # Jobs: the in-process worker of `serve`, the engine's heartbeats, the secrets key
    # (32 bytes, base64url) shared by the API and every worker; unset: a key file in the
    # data dir (fine on one machine, set it when workers run elsewhere).
    in_process_worker: bool = True
    worker_concurrency: int = 2
    job_queue: str = "jobs"
    # More processes, besides the built-ins and the `geocatalog.processes` entry points:
    # `module:NAME` of a Process or a list of them, comma-separated.
    extra_processes: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # Folders of processes defined as data (JSON files, each running a command),
    # comma-separated; the shipped examples' folder by default (empty: none).
    process_definitions: Annotated[list[Path], NoDecode] = Field(
        default_factory=lambda: [SHIPPED_DEFINITIONS])
    # `publish-dataset` creates a missing `climate_forecast-*` collection only for jobs of
    # these projects (`*`: any job, personal ones too; empty: never).
    publish_collection_projects: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["*"])
    job_heartbeat_seconds: float = 2.0
    # The longest an execution request with `Prefer: respond-sync` / `wait=N` waits for its
    # job (a process declaring `sync`); then it answers 201 as for any job.
    sync_wait_seconds: float = Field(default=30.0, ge=0, le=600)
    job_stalled_seconds: float = 10.0
    job_secrets_key: str | None = None
    # The jobs' sandbox: `bwrap` (Debian's bubblewrap around every job's process: a
    # read-only system, no data dir, no worker /proc, network only when a process declares
    # it) or `none` (where jobs are isolated otherwise, e.g. one container per job).
    job_sandbox: Literal["bwrap", "none"] = "bwrap"
    # Job callbacks (`subscriber`): each attempt's timeout, and how many a worker sends at
    # once (the others wait their turn; a silent target costs that many connections).
    callback_timeout_seconds: float = Field(default=5.0, gt=0, le=60)
    callbacks_in_flight: int = Field(default=16, ge=1, le=1000)

    # Stock stac-fastapi knobs we fix for this service.
    stac_fastapi_title: str = "geocatalog"
    stac_fastapi_description: str = "Geospatial data catalog (STAC API / OGC API Features)"
    stac_fastapi_landing_id: str = "geocatalog"
    prefix_path: str = "/data"
    openapi_url: str = "/data/api"
    docs_url: str = "/data/api.html"
    enable_transactions_extensions: bool = True
    # Items are merged with their collection's base item in the API (pypgstac's merge),
    # not in pgstac's PL/pgSQL: most of the database time of a 100-item page.
    use_api_hydrate: bool = True
    # MiB of items kept as served, by their stored text, per API process (0: none kept):
    # most of a page's API CPU is rendering items, and the same items are asked again.
    rendered_items_mb: int = Field(default=16, ge=0)

    stac_fastapi_version: str = "0.1.0"

    # `text` or `json` (one object per line, with the request id): `serve` and `worker`.
    log_format: Literal["text", "json"] = "text"

    # How long pgstac reuses a query's `numberMatched` (exact up to 100,000 matches, then
    # estimated) before counting again: a count lags writes by at most this (a PostgreSQL
    # interval; pgstac's own default is a day).
    search_count_ttl: str = "10 seconds"

    # Items per page at most: a larger `limit` is cropped to it (items pages, searches).
    max_page_size: int = 10_000

    # Request bodies above this size are refused with 413 (bulk loads: `geocatalog load`).
    max_body_bytes: int = 32 * 2**20

    # `serve`: load the demo data set into an empty catalog on start.
    load_demo_data: bool = True
    # `serve`: migrate on start (off where a one-shot `geocatalog migrate` runs as the owner
    # and the API connects as its own role).
    migrate_on_start: bool = True

    @field_validator("extra_processes", "publish_collection_projects",
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
                # any other PostgreSQL setting is allowed (extra="allow")
                max_parallel_workers_per_gather=str(  # type: ignore[call-arg]
                    self.db_parallel_workers),
                **more,
            ),
        )

    @property
    def cluster(self) -> Cluster:
        """The embedded cluster (used when `database_url` is unset)."""
        return Cluster(datadir=self.data_dir / "pg", port=self.geocatalog_pg_port)

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
