"""The servers under test, each a real uvicorn process on loopback, started one at a time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.settings import Settings
from tests.support.uvicorn_process import server_process, uvicorn_process


@dataclass(frozen=True)
class Server:
    name: str
    app: str  # uvicorn factory
    prefix: str  # where the STAC API lives: "" for stock, "/data" for geocatalog
    env: dict[str, str] = field(default_factory=dict)
    geocatalog: bool = False
    options: tuple[str, ...] = ()  # more uvicorn options
    command: tuple[str, ...] = ()  # not a uvicorn app: this program, given `--addr`


def stock(name: str, dsn: str, **extra: str) -> Server:
    url = urlsplit(dsn)
    env = {"PGUSER": url.username or "", "PGPASSWORD": url.password or "",
           "PGHOST": url.hostname or "", "PGPORT": str(url.port), "PGDATABASE": url.path[1:],
           # POST item needs the transaction extension, off in stock's defaults.
           "ENABLE_TRANSACTIONS_EXTENSIONS": "true", **extra}
    return Server(name, "stac_fastapi.pgstac.app:create_app", "", env)


def geocatalog(name: str, dsn: str, data_dir: Path, **extra: str) -> Server:
    env = {"DATABASE_URL": dsn, "GEOCATALOG_DATA_DIR": str(data_dir),
           "LOAD_DEMO_DATA": "false",
           # metrics as `geocatalog serve` keeps them (files, for several processes)
           "PROMETHEUS_MULTIPROC_DIR": str(data_dir / "metrics" / name),
           # a platform with an explorer and notebooks: every generated link is measured
           "EXPLORER_URL_TEMPLATE": "https://explorer.example/data-explorer?source={href}",
           "NOTEBOOK_URL_TEMPLATE": "https://notebooks.example/lab?fromURL={href}", **extra}
    return Server(name, "stac_ext.app:create_app", "/data", env, geocatalog=True)


def rustac(name: str, dsn: str) -> Server | None:
    """rustac's STAC server (Rust) on the same pgstac database: reads only (no
    transactions); None when `make bench` has not installed it."""
    program = shutil.which("rustac", path=str(Path(sys.executable).parent))
    if program is None:
        return None
    # rustac needs pgstac's schema first in its connections' search path
    pgstac = f"{dsn}?options=-c%20search_path%3Dpgstac%2Cpublic"
    return Server(name, "", "", {}, command=(program, "serve", "--pgstac", pgstac))


def local_issuer(dsn: str, data_dir: Path) -> tuple[Settings, LocalIssuer]:
    """The settings of the servers on `dsn` with their data in `data_dir`, and the local
    issuer they trust (the tokens the scenarios send)."""
    settings = Settings(database_url=dsn, geocatalog_data_dir=data_dir)
    assert settings.local_issuer
    return settings, LocalIssuer(settings.issuer_key_file, settings.local_issuer)


def writer_token(settings: Settings, issuer: LocalIssuer) -> str:
    """A token for the scenarios that write (POST item)."""
    return issuer.mint("bench-writer", settings.data_client_id, [], [], 24 * 3600)


def peers(dsn: str, data_dir: Path) -> dict[str, Server]:
    """Every server the benchmark compares, by name."""
    return {server.name: server for server in [
        stock("stock", dsn),
        stock("stock-tuned", dsn, USE_API_HYDRATE="TRUE"),
        rustac("rustac", dsn),
        geocatalog("geocatalog", dsn, data_dir),
        # the same server without generated content and the `owner` extension: their cost
        geocatalog("geocatalog-bare", dsn, data_dir, GENERATED_CONTENT="false",
                   OWNER_SEARCH="false"),
        # and without metrics (the others count in `geocatalog serve`'s multi-process mode)
        geocatalog("geocatalog-nometrics", dsn, data_dir, METRICS="false"),
    ] if server is not None}


def job_service(dsn: str, data_dir: Path, **extra: str) -> Server:
    """The process API as compose runs it: two API workers, no job worker in them (the
    job workers are `geocatalog worker` processes of their own, `job_workers`)."""
    server = geocatalog("geocatalog-jobs", dsn, data_dir, IN_PROCESS_WORKER="false", **extra)
    return Server(server.name, server.app, server.prefix, server.env, True,
                  ("--workers", "2"))


@contextmanager
def job_workers(server: Server, count: int, concurrency: int) -> Iterator[None]:
    """`count` `geocatalog worker` processes beside `server` (same database, same key)."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PG", "DATABASE_URL"))},
           **server.env}
    workers = [subprocess.Popen([sys.executable, "-m", "stac_ext.cli", "worker",
                                 "--concurrency", str(concurrency)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for _ in range(count)]
    try:
        yield
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(30)


@dataclass
class Running:
    server: Server
    url: str  # the STAC API root, no trailing slash
    process: subprocess.Popen[bytes]

    def peak_rss_mb(self) -> float:
        """The worker's peak resident set (VmHWM): uvicorn runs one worker, itself."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")


@contextmanager
def serving(server: Server, port: int) -> Iterator[Running]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PG", "DATABASE_URL", "USE_API_HYDRATE"))}
    env.update(server.env)
    if metrics := env.get("PROMETHEUS_MULTIPROC_DIR"):  # this server's counts only
        shutil.rmtree(metrics, ignore_errors=True)
        Path(metrics).mkdir(parents=True)
    if server.command:
        with server_process([*server.command, "--addr", f"127.0.0.1:{port}"], port, env,
                            f"{server.prefix}/collections", stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL) as process:
            yield Running(server, f"http://127.0.0.1:{port}{server.prefix}", process)
        return
    with uvicorn_process(server.app, port, env, f"{server.prefix}/collections",
                         "--no-access-log", *server.options) as process:
        yield Running(server, f"http://127.0.0.1:{port}{server.prefix}", process)
