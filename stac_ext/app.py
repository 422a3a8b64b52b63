"""Composition root: builds the one ASGI app serving `/data` (and, when wired, `/processes`).

Every package receives what it needs from here (settings, pools, dependencies); this is the
only module that knows them all. `uvicorn --factory stac_ext.app:create_app` serves it.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from stac_fastapi.pgstac.db import close_db_connection, connect_to_db

import catalogs_ext
from catalogs_ext import CatalogAccess, CatalogsExtension
from process_api import (
    Engine,
    Process,
    ProcessesConfig,
    Registry,
    SecretBox,
    create_process_app,
    lifespan_of,
)
from stac_ext.api import build_data_api
from stac_ext.auth import AuthDependencies, Authenticator
from stac_ext.auth.keys import RemoteJwks, StaticKeys
from stac_ext.auth.local_issuer import LocalIssuer
from stac_ext.body_limit import BodyLimitMiddleware
from stac_ext.errors import add_error_handlers
from stac_ext.keyfiles import decode_key, load_or_create_key
from stac_ext.openapi import (
    OGC_ERROR,
    STAC_ERROR,
    complete_openapi,
    data_protected,
    processes_protected,
)
from stac_ext.proxy import BaseUrlMiddleware
from stac_ext.publish import PUBLISH_DATASET
from stac_ext.root import root_router
from stac_ext.settings import Settings

logger = logging.getLogger("geocatalog")


def build_auth(settings: Settings) -> tuple[AuthDependencies, LocalIssuer | None]:
    """The configured identity provider, or the local development issuer."""
    local = None
    if settings.local_issuer:
        local = LocalIssuer(settings.issuer_key_file, settings.local_issuer)
        logger.warning(
            "DEVELOPMENT TOKEN ISSUER ACTIVE (%s): anyone with `geocatalog token` on this "
            "machine can mint tokens. Set OIDC_ISSUER for any real deployment.", local.issuer)
        authenticator = Authenticator(StaticKeys(local.public_keys), local.issuer)
    else:
        assert settings.oidc_issuer  # Settings refuses JWKS_URL alone
        source = RemoteJwks(issuer=settings.oidc_issuer, jwks_url=settings.jwks_url)
        authenticator = Authenticator(source, settings.oidc_issuer)
    return AuthDependencies(authenticator, settings.admin_right), local


def catalog_access(settings: Settings, auth: AuthDependencies) -> CatalogAccess:
    client_id = settings.data_client_id
    return CatalogAccess(
        writer=auth.client(client_id),
        is_admin=lambda user: auth.is_admin(user, client_id),
        has_right=lambda user, right: right in user.rights_for(client_id),
    )


def configured_processes(settings: Settings) -> list[Process]:
    """The processes named by EXTRA_PROCESSES (`module:NAME`, a Process or a list)."""
    found: list[Process] = []
    for path in settings.extra_processes:
        module, _, name = path.partition(":")
        value = getattr(importlib.import_module(module), name)
        found += list(value) if isinstance(value, list | tuple) else [value]
    return found


def build_engine(settings: Settings, processes: Iterable[Process] = ()) -> Engine:
    """The job engine, as the API and `geocatalog worker` both build it."""
    key = (decode_key(settings.job_secrets_key) if settings.job_secrets_key
           else load_or_create_key(settings.job_secrets_key_file))
    registry = Registry.discover([PUBLISH_DATASET, *configured_processes(settings),
                                  *processes])
    return Engine(settings.dsn, registry, SecretBox(key),
                  queue=settings.job_queue, heartbeat_seconds=settings.job_heartbeat_seconds,
                  stalled_seconds=settings.job_stalled_seconds)


def create_app(settings: Settings | None = None, processes: Iterable[Process] = ()) -> FastAPI:
    """The service. `processes` adds processes to the built-in and entry-point ones."""
    settings = settings or Settings()
    auth, local_issuer = build_auth(settings)
    process_app = create_process_app(ProcessesConfig(
        engine=build_engine(settings, processes),
        user=auth.client(settings.process_client_id),
        in_process_worker=settings.in_process_worker,
        worker_concurrency=settings.worker_concurrency,
    ))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await connect_to_db(
            app, postgres_settings=settings.postgres, add_write_connection_pool=True
        )
        try:
            async with lifespan_of(process_app)():  # a mounted app's own does not run
                yield
        finally:
            await close_db_connection(app)

    app = build_data_api(
        settings, auth, lifespan,
        extensions=[CatalogsExtension(access=catalog_access(settings, auth))],
        on_item_delete=[catalogs_ext.UNLINK_ITEM],
    ).app
    add_error_handlers(app)
    app.include_router(root_router(settings.stac_fastapi_title, settings.prefix_path,
                                   with_processes=True))
    app.mount("/processes", process_app)
    if local_issuer is not None:
        app.include_router(local_issuer.router())
    complete_openapi(app, STAC_ERROR, data_protected)
    complete_openapi(process_app, OGC_ERROR, processes_protected)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    if settings.base_url:
        app.add_middleware(BaseUrlMiddleware, base_url=settings.base_url)
    app.state.auth = auth
    return app
