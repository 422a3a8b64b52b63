"""HTTP for tests: the app built and started (`started_app`, behind the `service_app`
fixture) and its clients, free ports, the app in a real uvicorn."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.settings import Settings
from tests.support.roles import on_database, role_env
from tests.support.uvicorn_process import uvicorn_process


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_client(app, token: str | None = None, *, base_url: str = "http://testserver",
                **options: Any) -> httpx.AsyncClient:
    """A client of the ASGI `app`, `token` as its bearer; `options`: httpx's (cookies...)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url,
                             headers=headers, **options)


@dataclass
class Started:
    """An app `started_app` built and started, and the clients it gave (closed with it)."""

    app: Any
    clients: list[httpx.AsyncClient] = field(default_factory=list)

    def client(self, token: str | None = None, **options: Any) -> httpx.AsyncClient:
        """A client of the app (`http_client`), closed when the app stops."""
        self.clients.append(http_client(self.app, token, **options))
        return self.clients[-1]


@asynccontextmanager
async def started_app(settings: Settings, *, database: str | None = None,
                      processes: Iterable[Any] = (), tracer_provider: Any = None,
                      **overrides: Any) -> AsyncIterator[Started]:
    """The service built with `settings` and `overrides` (any setting, by its field name),
    on `database` (another database than the settings', with its roles) when given, and
    started (its lifespan run); `processes` and `tracer_provider`: `create_app`'s."""
    from stac_ext.app import create_app  # the composition root, only where a test asks
    configured = settings.model_copy(update=overrides)
    if database is not None:
        configured = on_database(configured, database)
    app = create_app(configured, processes=processes, tracer_provider=tracer_provider)
    started = Started(app)
    async with app.router.lifespan_context(app):
        try:
            yield started
        finally:
            for client in started.clients:
                await client.aclose()


@contextmanager
def uvicorn_serving(settings: Settings, port: int | None = None,
                    options: tuple[str, ...] = (), **env: str) -> Iterator[str]:
    """The app in a real uvicorn process on `port` (default: a free one), without a job
    worker unless `env` asks for one (`options`: uvicorn's, e.g. `--workers 2`); its base
    URL."""
    port = port or free_port()
    database_url = env.get("DATABASE_URL", settings.database_url or "")
    environ = {**os.environ, "DATABASE_URL": database_url, **role_env(database_url),
               "OIDC_ISSUER": settings.oidc_issuer or "", "LOAD_DEMO_DATA": "false",
               "GEOCATALOG_DATA_DIR": str(settings.data_dir), "IN_PROCESS_WORKER": "false",
               # no worker of its own: a synchronous execution the fuzzer sends waits briefly
               "SYNC_WAIT_SECONDS": "10",
               "PROCESS_DEFINITIONS": ",".join(map(str, settings.process_definitions)),
               **env}
    with uvicorn_process("stac_ext.app:create_app", port, environ, "/healthz", *options):
        yield f"http://127.0.0.1:{port}"


@contextmanager
def signing_in_locally(settings: Settings, data_dir: Path, options: tuple[str, ...] = (),
                       **env: str) -> Iterator[tuple[str, LocalIssuer]]:
    """The app served (`uvicorn_serving`, with `options` and `env`) with its own local
    development issuer, its keys in `data_dir`: its base URL, and that issuer (to mint its
    users' tokens)."""
    port = free_port()
    with uvicorn_serving(settings, port=port, options=options, OIDC_ISSUER="",
                         GEOCATALOG_PORT=str(port), GEOCATALOG_DATA_DIR=str(data_dir),
                         **env) as base:
        yield base, LocalIssuer(data_dir / "issuer-key.json", f"{base}/auth")


def wait_until_ok(url: str, seconds: float = 120) -> httpx.Response:
    """Poll `url` until it answers 200 (bounded); its last answer."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            r = httpx.get(url, timeout=2)
            if r.status_code == 200 or time.monotonic() > deadline:
                return r
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)
