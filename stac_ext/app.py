"""Composition root: builds the one ASGI app serving `/data` (and, when wired, `/processes`).

Every package receives what it needs from here (settings, pools, dependencies); this is the
only module that knows them all. `uvicorn --factory stac_ext.app:create_app` serves it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from stac_fastapi.pgstac.db import close_db_connection, connect_to_db

from stac_ext.api import build_data_api
from stac_ext.errors import add_error_handlers
from stac_ext.proxy import BaseUrlMiddleware
from stac_ext.root import root_router
from stac_ext.settings import Settings


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await connect_to_db(
            app, postgres_settings=settings.postgres, add_write_connection_pool=True
        )
        try:
            yield
        finally:
            await close_db_connection(app)

    app = build_data_api(settings, lifespan).app
    add_error_handlers(app)
    app.include_router(root_router(settings.stac_fastapi_title, settings.prefix_path,
                                   with_processes=False))
    if settings.base_url:
        app.add_middleware(BaseUrlMiddleware, base_url=settings.base_url)
    return app
