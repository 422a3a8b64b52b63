"""The process API as a FastAPI app, mounted at `/processes` by the composition root."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI

from process_api.api.deploy_routes import CONFORMANCE as DEPLOY_CONFORMANCE
from process_api.api.deploy_routes import DeployRoutes
from process_api.api.errors import add_error_handlers
from process_api.api.job_routes import JobRoutes
from process_api.api.landing import service_router
from process_api.api.openapi30 import VERSION, openapi30
from process_api.api.process_routes import ProcessRoutes
from process_api.api.service import (
    CallerDependency,
    OptionalCallerDependency,
    ProcessService,
)
from process_api.data.file_inputs import Catalog
from process_api.jobs.engine import Engine
from process_api.jobs.tasks import cancelled
from stac_ext.platform.access import Caller as Who
from stac_ext.platform.telemetry.traces import NATIVE_TELEMETRY_OFF


@dataclass(frozen=True)
class ProcessesConfig:
    engine: Engine
    user: CallerDependency  # a token of the process client
    optional_user: OptionalCallerDependency  # the same, or None without a token
    #: a job's files' reader: a token of the process client or the data client (a
    #: published item's assets are read with the token that reads the item), or None
    file_reader: OptionalCallerDependency
    deployer: CallerDependency  # a token of the process client with the right to deploy
    #: a caller (None: anonymous) as the access table takes them (`stac_ext.platform.access`)
    as_caller: Callable[[Any], Who]
    catalog: Catalog | None = None  # the data API, read as a caller (file input references)
    conformance: tuple[str, ...] = ()  # classes others earn for this API (its HTML pages)
    #: FastAPI dependencies every route that takes a body runs first (bounds on the JSON)
    body_checks: tuple[Callable[..., Any], ...] = ()


def create_process_app(config: ProcessesConfig) -> FastAPI:
    engine, settings = config.engine, config.engine.settings

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with engine:
            worker = None
            if settings.in_process_worker:
                worker = asyncio.create_task(engine.run_worker(
                    settings.worker_concurrency, install_signal_handlers=False))
            try:
                yield
            finally:
                if worker is not None:  # it lets its jobs run for their shutdown time first
                    await cancelled(worker,
                                    again_after=settings.job_shutdown_seconds + 10)

    app = FastAPI(title="geocatalog processes", version="1.0.0", lifespan=lifespan,
                  # `api.html` is the composition root's documentation page
                  openapi_url="/api", docs_url=None, redoc_url=None,
                  description="OGC API Processes - Part 1: Core, and Part 2: Deploy, "
                  "Replace, Undeploy (OGC application packages in CWL).",
                  telemetry=NATIVE_TELEMETRY_OFF)
    app.include_router(service_router((*DEPLOY_CONFORMANCE, *config.conformance)))
    service = ProcessService.of(engine, config.as_caller, config.catalog)
    app.include_router(ProcessRoutes(service, config.user, config.optional_user,
                                     settings.sync_wait_seconds, config.body_checks).router)
    app.include_router(DeployRoutes(service, config.user, config.deployer).router)
    app.include_router(JobRoutes(service, config.user, config.file_reader).router)
    add_error_handlers(app)
    generate = app.openapi

    def openapi() -> dict[str, Any]:  # the `oas30` class: FastAPI writes 3.1
        if app.openapi_schema is None or app.openapi_schema.get("openapi") != VERSION:
            app.openapi_schema = openapi30(generate())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way
    return app


def lifespan_of(app: FastAPI) -> Callable[[], AbstractAsyncContextManager[Any]]:
    """The sub-app's lifespan, for the root app to run (a mount does not run it)."""
    return lambda: app.router.lifespan_context(app)
