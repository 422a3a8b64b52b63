"""Composition root: builds the one ASGI app serving `/`, `/data` and `/processes`.

Every package receives what it needs from here (settings, pools, dependencies); this is the
only module that knows them all. `uvicorn --factory stac_ext.app:create_app` serves it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from datetime import timedelta
from functools import partial
from typing import Any

from fastapi import FastAPI, Request
from opentelemetry.sdk.trace import TracerProvider

import catalogs_ext
from catalogs_ext import CatalogAccess, CatalogTreeExtension, DataPaths
from process_api import (
    JOB_LIST_STATUSES,
    JOB_REFUSALS,
    OPENAPI30_MEDIA_TYPE,
    Engine,
    Process,
    ProcessesConfig,
    QueueFull,
    Registry,
    SecretBox,
    create_process_app,
    lifespan_of,
    load_definitions,
    load_entry,
    openapi30,
    parse_memory,
)
from stac_ext.content.decorate import ItemDecorator
from stac_ext.content.routes import ExampleExtension
from stac_ext.data_api.api import DataExtensions, build_data_api
from stac_ext.data_api.hrefs import href_problem
from stac_ext.data_api.policy import DataPolicy, reader_of
from stac_ext.data_api.queries import search_of
from stac_ext.data_api.rendered_items import RenderedItems
from stac_ext.data_api.scoped_search import scoped_search
from stac_ext.data_api.search.owner import OWNER_CONFORMANCE, OWNER_SPEC
from stac_ext.data_api.settings import EXPLORER
from stac_ext.data_api.spec_pages import SpecPages
from stac_ext.data_api.urls import collection_path, item_path
from stac_ext.explorer.routes import ExplorerExtension
from stac_ext.explorer.service import Explorer, Limits
from stac_ext.explorer.sources import Storage
from stac_ext.governance import PROPOSALS
from stac_ext.governance.collection_rule import CollectionRule
from stac_ext.governance.routes import CONFORMANCE as PROPOSALS_CONFORMANCE
from stac_ext.governance.routes import SPEC as PROPOSALS_SPEC
from stac_ext.governance.routes import ProposalsExtension
from stac_ext.migration_sets import MIGRATIONS
from stac_ext.platform.access import Caller
from stac_ext.platform.auth.authenticator import Authenticator
from stac_ext.platform.auth.dependencies import AuthDependencies
from stac_ext.platform.auth.keys import RemoteJwks, StaticKeys
from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.platform.auth.principal import Principal
from stac_ext.platform.auth.sign_in import sign_in_router
from stac_ext.platform.database import readiness
from stac_ext.platform.database.group_commit import GroupCommit
from stac_ext.platform.database.pools import close_pools, open_pools, pool_states
from stac_ext.platform.service.allowed_methods import AllowedMethodsMiddleware
from stac_ext.platform.service.base_url import BaseUrlMiddleware
from stac_ext.platform.service.body_limit import BodyLimitMiddleware
from stac_ext.platform.service.errors import UnexpectedErrorMiddleware, add_error_handlers
from stac_ext.platform.service.json_body import json_object_body_64
from stac_ext.platform.service.keyfiles import decode_key, load_or_create_key
from stac_ext.platform.service.landing import root_router
from stac_ext.platform.service.logs import RequestIdMiddleware
from stac_ext.platform.service.manager import end_with_manager
from stac_ext.platform.service.openapi import (
    OGC_ERROR,
    STAC_ERROR,
    complete_openapi,
    data_protected,
    processes_protected,
    serve_openapi_as,
)
from stac_ext.platform.sessions.keeper import SessionKeeper
from stac_ext.platform.sessions.middleware import SessionMiddleware
from stac_ext.platform.sessions.provider import Provider, in_process
from stac_ext.platform.sessions.routes import session_router
from stac_ext.platform.sessions.sealing import Seal
from stac_ext.platform.sessions.settings import key_bytes
from stac_ext.platform.sessions.store import SessionStore
from stac_ext.platform.telemetry.exposition import metrics_router
from stac_ext.platform.telemetry.http_metrics import RequestMetricsMiddleware, RouteRecorder
from stac_ext.platform.telemetry.readings import Readings, sampling
from stac_ext.platform.telemetry.traces import configured_provider, instrument_app
from stac_ext.publish.definition import PUBLISH_DATASET, PUBLISH_RESULTS
from stac_ext.publish.targets import PublishingReads
from stac_ext.settings import CATALOG_TREE, HTML, PYTHON_EXAMPLE, ProcessSettings, Settings
from stac_ext.subscriptions.dispatcher import LEASE_SECONDS, Dispatcher
from stac_ext.subscriptions.extension import CONFORMANCE as SUBSCRIPTIONS_CONFORMANCE
from stac_ext.subscriptions.extension import SPEC as SUBSCRIPTIONS_SPEC
from stac_ext.subscriptions.extension import SUBSCRIPTIONS, SubscriptionsExtension
from stac_ext.subscriptions.routes import SubscriptionsConfig
from stac_ext.subscriptions.signing import Signer
from stac_ext.subscriptions.standing_jobs import Processes
from stac_ext.subscriptions.webhooks import Webhooks
from stac_ext.web.addresses import api_address
from stac_ext.web.conformance import PROCESSES_HTML, HtmlConformance
from stac_ext.web.negotiation import NegotiationMiddleware
from stac_ext.web.site import EXPLORER_PAGE, STATIC_PATHS, SignIn, WebFace, add_web_face

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


def browser_sessions(settings: Settings, auth: AuthDependencies, app: FastAPI
                     ) -> tuple[SessionKeeper, Seal]:
    """The web face's sign-in, kept server-side (the identity provider's, or the local
    development issuer's: this app, asked in-process), its sessions in the API's database."""
    key = key_bytes(settings.session_key) if settings.session_key \
        else load_or_create_key(settings.session_key_file)
    seal = Seal(key)
    local = not settings.oidc_issuer
    provider = Provider(
        settings.oidc_issuer or settings.local_issuer or "", settings.web_client_id,
        settings.web_client_secret.get_secret_value() if settings.web_client_secret else None,
        transport=in_process(app, settings.base_url) if local else None)
    store = SessionStore(lambda: app.state.writepool, seal, timeout=settings.db_timeout)
    keeper = SessionKeeper(provider, auth.authenticator, store,
                           timedelta(hours=settings.session_hours))
    return keeper, seal


def catalog_access(policy: DataPolicy) -> CatalogAccess:
    """The tree's rights checks and readers, as the data API decides them (`policy`)."""

    def caller(user: object) -> Caller:
        return policy.auth.caller(user if isinstance(user, Principal) else None,
                                  policy.client_id)

    def reader(request: Request) -> dict[str, Any] | None:
        # a read's: its dependency's (the token's, or the caller the service reads as: a
        # job's publishing checked at submission read the caller's own hidden catalogs as
        # missing); a write's: the principal its token put (none: anonymous)
        if hasattr(request.state, "reader"):
            return reader_of(request)
        return policy.reader(getattr(request.state, "principal", None))

    return CatalogAccess(writer=policy.auth.client(policy.client_id), caller=caller,
                         reader=reader)


def configured_processes(settings: ProcessSettings) -> list[Process]:
    """The processes named by EXTRA_PROCESSES (`module:NAME`, a Process or a list), and
    those defined as data in the PROCESS_DEFINITIONS folders."""
    found: list[Process] = []
    for reference in settings.extra_processes:
        value = load_entry(reference)
        found += list(value) if isinstance(value, list | tuple) else [value]
    return found + load_definitions(settings.process_definitions)


def build_engine(settings: Settings, processes: Iterable[Process] = (),
                 dsn: str | None = None, tracer_provider: TracerProvider | None = None
                 ) -> Engine:
    """The job engine, as the API and `geocatalog worker` both build it (`dsn`: the
    worker's role; default: the API's; `tracer_provider`: its jobs' spans): the process
    API's own settings, and what crosses concerns (the databases, the data dir no job sees
    and its keys, the results store, the processes this service adds)."""
    key = (decode_key(settings.job_secrets_key) if settings.job_secrets_key
           else load_or_create_key(settings.job_secrets_key_file))
    registry = Registry.discover([PUBLISH_DATASET, *configured_processes(settings),
                                  *processes])
    # a job's record in, its stored record (or why a quota refused it) out
    submissions: GroupCommit[dict[str, Any], dict[str, Any] | QueueFull] = \
        GroupCommit(JOB_REFUSALS)
    return Engine(settings, dsn=dsn or settings.api_dsn, registry=registry,
                  box=SecretBox(key), gather=submissions.add,
                  results_store=settings.results_store_url, job_dsn=settings.job_dsn,
                  timeout=settings.db_timeout, publisher=PUBLISH_RESULTS,
                  hidden=[settings.data_dir],
                  tracer=tracer_provider.get_tracer("geocatalog.jobs")
                  if tracer_provider is not None else None)


class Subscriptions:
    """The subscriptions' parts: their routes' configuration, and the dispatcher that
    matches and delivers (its process API set once the app is built: `attach`)."""

    def __init__(self, settings: Settings, auth: AuthDependencies) -> None:
        key = (decode_key(settings.webhook_signing_key) if settings.webhook_signing_key
               else load_or_create_key(settings.webhook_signing_key_file))
        signer = Signer(key)
        self.processes: Processes | None = None
        self.config = SubscriptionsConfig(
            user=auth.client(settings.data_client_id),
            caller=partial(auth.caller, client_id=settings.data_client_id),
            signer=signer, settings=settings, data_prefix=settings.prefix_path,
            processes=lambda: self.processes)
        self.dispatcher = Dispatcher(settings.api_dsn, settings, Webhooks(
            signer, settings, settings.prefix_path, LEASE_SECONDS))

    def attach(self, app: FastAPI, settings: Settings, engine: Engine) -> None:
        self.processes = self.dispatcher.processes = Processes(
            app=app, data_prefix=settings.prefix_path,
            processes_prefix=settings.processes_prefix,
            clients=frozenset({settings.data_client_id, settings.process_client_id}),
            box=engine.box)


def explorer_of(settings: Settings) -> Explorer:
    """The data explorer: how it reads assets (the deployment's S3 access, the results
    store) and its bounds."""
    return Explorer(Storage(s3=settings.assets_s3_section,
                            results_url=settings.results_store_url,
                            results_options=settings.results_store_options),
                    Limits(read_bytes=parse_memory(settings.explorer_read_bytes),
                           seconds=settings.explorer_seconds,
                           renders=settings.explorer_renders))


def data_extensions(settings: Settings, auth: AuthDependencies,
                    subscriptions: SubscriptionsConfig | None = None) -> DataExtensions:
    """Stock's extensions and ours, in stock's maps (`ENABLED_EXTENSIONS` names keys)."""
    # the explorer links open the service's own explorer page unless a template names another
    decorator = ItemDecorator(settings.explorer_url_template, settings.notebook_url_template,
                              explorer_page=EXPLORER_PAGE, data_prefix=settings.prefix_path) \
        if settings.generated_content else None
    policy = DataPolicy(auth=auth, client_id=settings.data_client_id)
    extensions = DataExtensions(
        settings=settings, decorator=decorator,
        rendered=RenderedItems(settings.rendered_items_mb * 2**20)
        if settings.rendered_items_mb else None,
        policy=policy,
        owner_search=settings.owner_search, on_item_delete=[catalogs_ext.UNLINK_ITEM],
        aggregation_properties=settings.aggregation_properties,
        aggregate_exact_up_to=settings.aggregate_exact_up_to,
        collection_rule=CollectionRule(settings.require_vocabulary),
    )
    # a catalog's `_search` is the data API's search with the subtree's statement
    search = scoped_search(extensions, search_of(catalogs_ext.SUBTREE_BODY), scope_param="path")
    tree = CatalogTreeExtension(
        access=catalog_access(policy), search=search, href_problem=href_problem,
        paths=DataPaths(collection=collection_path, item=item_path,
                        search_conforms_to=search.conforms_to))
    explorer = ExplorerExtension(explorer_of(settings),
                                 processes_prefix=settings.processes_prefix)
    extensions.extra_map = {PYTHON_EXAMPLE: ExampleExtension(), CATALOG_TREE: tree,
                            HTML: HtmlConformance(), PROPOSALS: ProposalsExtension(policy),
                            EXPLORER: explorer,
                            **extensions.extra_map}
    if subscriptions is not None:
        extensions.extra_map[SUBSCRIPTIONS] = SubscriptionsExtension(config=subscriptions)
    return extensions


def create_app(settings: Settings | None = None, processes: Iterable[Process] = (),
               tracer_provider: TracerProvider | None = None) -> FastAPI:
    """The service. `processes` adds processes to the built-in and entry-point ones;
    `tracer_provider` traces it (default: as the `OTEL_*` variables say, else not at all)."""
    end_with_manager()  # a worker of `geocatalog serve` never outlives its manager
    settings = settings or Settings()
    auth, local_issuer = build_auth(settings)
    tracer_provider = tracer_provider or configured_provider()
    engine = build_engine(settings, processes, tracer_provider=tracer_provider)
    # reads the data API as a job's caller, pages of ours pasted as references included
    catalog = PublishingReads(settings.prefix_path,
                              pages=partial(api_address, data_prefix=settings.prefix_path))
    process_app = create_process_app(ProcessesConfig(
        engine=engine, catalog=catalog,
        user=auth.client(settings.process_client_id),
        optional_user=auth.optional_client(settings.process_client_id),
        file_reader=auth.optional_client(settings.process_client_id, settings.data_client_id),
        deployer=auth.client(settings.process_client_id, right=settings.deploy_right),
        as_caller=partial(auth.caller, client_id=settings.process_client_id),
        conformance=(PROCESSES_HTML,),  # the web face's pages answer every resource
        body_checks=(json_object_body_64,),
    ))

    subscriptions = Subscriptions(settings, auth)
    extensions = data_extensions(settings, auth, subscriptions.config)
    kept = extensions.rendered
    readings = Readings(pools=[engine.pool_states], database=[engine.sample_queue],
                        kept=kept.state if kept is not None else None)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await open_pools(app, settings.postgres, settings.db_timeout,
                         reader=settings.postgres_reader)
        readings.pools.append(partial(pool_states, app))
        dispatching = asyncio.create_task(subscriptions.dispatcher.run()) \
            if settings.subscriptions_delivery else None
        try:
            async with lifespan_of(process_app)(), sampling(  # a mount's own does not run
                    readings, settings.metrics_sample_seconds):
                # What start-up made (modules, the app, its models: about 130,000 objects)
                # lives as long as the process: out of the collector's reach, the
                # collections a request's allocations trigger no longer walk it again (a
                # quarter of a 100-item page's CPU went to them).
                gc.collect()
                gc.freeze()
                yield
        finally:
            if dispatching is not None:
                dispatching.cancel()
                await asyncio.gather(dispatching, return_exceptions=True)
            readings.pools.pop()
            await close_pools(app)
            if isinstance(explorer, ExplorerExtension):
                explorer.explorer.close()

    app = build_data_api(settings, extensions, lifespan).app
    explorer = extensions.extra_map.get(EXPLORER)
    if isinstance(explorer, ExplorerExtension) and \
            explorer in extensions.get_enabled_extensions("extra"):
        app.include_router(explorer.jobs_router())  # a job's files: the process API's rule
    # our classes' URIs resolve whichever extensions are on (`spec_pages.py`)
    SpecPages(classes={OWNER_CONFORMANCE: OWNER_SPEC,
                       catalogs_ext.CONFORMANCE: catalogs_ext.SPEC,
                       PROPOSALS_CONFORMANCE: PROPOSALS_SPEC,
                       SUBSCRIPTIONS_CONFORMANCE: SUBSCRIPTIONS_SPEC}).register(app)
    add_error_handlers(app, settings.processes_prefix)
    expected = readiness.expected(MIGRATIONS)
    app.include_router(root_router(settings.stac_fastapi_title, settings.prefix_path,
                                   settings.processes_prefix,
                                   partial(readiness.check, expected=expected)))
    if settings.metrics and settings.metrics_port is None:
        app.include_router(metrics_router(readings))
    app.mount(settings.processes_prefix, process_app)
    if local_issuer is not None:
        app.include_router(local_issuer.router(sign_in_router(
            local_issuer, settings.web_client_id,
            audiences=settings.api_audiences)))
    sessions, seal = browser_sessions(settings, auth, app)
    app.include_router(session_router(sessions, seal), include_in_schema=False)
    add_web_face(app, WebFace(
        title=settings.stac_fastapi_title, data_prefix=settings.prefix_path,
        processes_prefix=settings.processes_prefix,
        stac_browser_dir=settings.stac_browser_dir, swagger_ui_dir=settings.swagger_ui_dir,
        charts_dir=settings.charts_dir,
        sign_in=SignIn(issuer=settings.oidc_issuer or settings.local_issuer or "",
                       client_id=settings.web_client_id,
                       local=not settings.oidc_issuer and bool(settings.local_issuer)),
        job_statuses=JOB_LIST_STATUSES,
        catalog_path=catalogs_ext.CATALOG_PATH, admin_right=settings.admin_right,
        deploy_right=settings.deploy_right))
    complete_openapi(app, STAC_ERROR, data_protected, token_reads=True)
    serve_openapi_as(app, older=(OPENAPI30_MEDIA_TYPE, openapi30))
    complete_openapi(process_app, OGC_ERROR, processes_protected)
    serve_openapi_as(process_app, OPENAPI30_MEDIA_TYPE)
    if settings.metrics:
        app.add_middleware(RouteRecorder)  # innermost: the routers' scope, not a copy
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(AllowedMethodsMiddleware)
    # `f`, HTML for browsers, every HTML answer protected
    app.add_middleware(NegotiationMiddleware, data_prefix=settings.prefix_path,
                       processes_prefix=settings.processes_prefix)
    # a browser session's cookie: the session's token for every request it makes
    app.add_middleware(SessionMiddleware, keeper=sessions,
                       ogc_prefix=settings.processes_prefix, static=STATIC_PATHS)
    app.add_middleware(UnexpectedErrorMiddleware, ogc_prefix=settings.processes_prefix)
    app.add_middleware(RequestIdMiddleware)
    if settings.metrics:
        app.add_middleware(RequestMetricsMiddleware)  # outermost of ours: all answers counted
    if settings.base_url:
        app.add_middleware(BaseUrlMiddleware, base_url=settings.base_url)
    if tracer_provider is not None:
        instrument_app(app, tracer_provider, process_app)
    catalog.app = app
    subscriptions.attach(app, settings, engine)
    app.state.auth = auth
    app.state.rendered_items = extensions.rendered  # items kept as served (None: none)
    return app
