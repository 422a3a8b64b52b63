"""Stock's code we copy, in one place: stac-fastapi-pgstac's `instantiate_api` (it builds a
plain `StacApi`; ours builds `DataStacApi`) and stac-fastapi's `create_async_endpoint`.
Each is pinned to the stock source it copies by `tests/data_api/test_stock_mirrors.py`.

Endpoints build their request model themselves, in the event loop: stac-fastapi's request
models (`ItemUri`, the items and GET /search models...) are attrs classes used as
dependencies, and FastAPI runs a class dependency in its thread pool: a hop to a thread
and back for each request, a large part of a single item's CPU (docs/performance.md), and
a dependency of its own is FastAPI solving one more dependant per request.
`create_async_endpoint` is stock's, except that the endpoint takes the model's parameters
as its own (same parameters, same validation, same OpenAPI) and builds the model from
them.

The routes stay stock's as stock declares them: each `register_*` of stock runs against a
recorder, and its route is added with the same arguments and our endpoint, on the app's own
router (at the same path): FastAPI resolves the routes of an included router, as stock's
router is, anew on every request, and these three (an item, an items page, a search) are
the reads every client makes. They run their request checks themselves (`CheckedRoute`).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, cast

import attr
from brotli_asgi import BrotliMiddleware
from fastapi import APIRouter, FastAPI, Request
from stac_fastapi.api.app import StacApi
from stac_fastapi.api.models import (
    EmptyRequest,
    ItemCollectionUri,
    JSONResponse,
    create_get_request_model,
    create_request_model,
)
from stac_fastapi.api.routes import create_async_endpoint as stock_endpoint
from stac_fastapi.pgstac.core import CoreCrudClient, health_check
from stac_fastapi.pgstac.models.extensions import Extensions
from stac_fastapi.types.search import APIRequest
from starlette.middleware import Middleware
from starlette.responses import Response

from stac_ext.data_api.request_checks import CheckedRoute
from stac_ext.data_api.search.free_text import search_body
from stac_ext.data_api.settings import DataApiSettings
from stac_ext.platform.service.cross_origin import CrossOrigin
from stac_ext.platform.service.forwarded import ForwardedHeaders
from stac_ext.platform.telemetry.traces import NATIVE_TELEMETRY_OFF


def model_parameters(model: type[APIRequest]) -> list[inspect.Parameter]:
    """The parameters of `model` (keyword-only), with the annotations FastAPI reads."""
    hints = typing.get_type_hints(model.__init__, include_extras=True)
    return [p.replace(annotation=hints.get(p.name, p.annotation), kind=p.KEYWORD_ONLY)
            for p in inspect.signature(model).parameters.values()]


def create_async_endpoint(func: Callable[..., Any], request_model: Any
                          ) -> Callable[..., Awaitable[Any]]:
    """Stock's endpoint factory; an `APIRequest` model's parameters are the endpoint's."""
    if not (isinstance(request_model, type) and issubclass(request_model, APIRequest)
            and inspect.iscoroutinefunction(func)):
        return stock_endpoint(func, request_model)

    async def endpoint(request: Request, **values: Any) -> Any:
        response = await func(request=request, **request_model(**values).kwargs())
        return Response(status_code=204) if response is None else response

    # what FastAPI reads: no return annotation (it would take it for a response model, as
    # stock's has none)
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                           annotation=Request), *model_parameters(request_model)])
    return endpoint


class _Recorder:
    """Stands in for the router while a stock `register_*` declares its route."""

    def __init__(self) -> None:
        self.routes: list[dict[str, Any]] = []

    def add_api_route(self, **route: Any) -> None:
        self.routes.append(route)


@attr.s
class DataStacApi(StacApi):
    def _like_stock(self, register: Callable[[], None], handler: Callable[..., Any],
                    request_model: type[APIRequest]) -> None:
        router, recorder = self.router, _Recorder()
        self.router = cast(APIRouter, recorder)
        try:
            register()
        finally:
            self.router = router
        for route in recorder.routes:
            self.app.router.add_api_route(**{
                **route, "path": self.router.prefix + route["path"],
                "endpoint": create_async_endpoint(handler, request_model),
                "route_class_override": CheckedRoute})

    def register_get_item(self) -> None:
        self._like_stock(super().register_get_item, self.client.get_item,
                         self.item_get_request_model)

    def register_get_item_collection(self) -> None:
        self._like_stock(super().register_get_item_collection, self.client.item_collection,
                         self.items_get_request_model)

    def register_get_search(self) -> None:
        self._like_stock(super().register_get_search, self.client.get_search,
                         self.search_get_request_model)


def instantiate_api(
    client: type[CoreCrudClient], extensions: Extensions,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]], settings: DataApiSettings,
) -> StacApi:
    """stac-fastapi-pgstac's `instantiate_api`, making a `DataStacApi` (our lifespan opens
    the pools, so stock's default lifespan is not needed)."""
    post_request_model = search_body(extensions.search)
    items_get_request_model: type[APIRequest] = ItemCollectionUri
    if extensions.item_collection:
        items_get_request_model = cast(type[APIRequest], create_request_model(
            model_name="ItemCollectionUri", base_model=ItemCollectionUri,
            extensions=extensions.item_collection, request_type="GET"))
    collection_search = extensions.collection_search
    collections_get_request_model: type[APIRequest] = (
        collection_search.GET if collection_search is not None else EmptyRequest)
    application_extensions = [*extensions.search, *extensions.item_collection,
                              *extensions.transaction, *extensions.catalog,
                              *extensions.extra]
    if collection_search is not None:
        application_extensions.append(collection_search)
    return DataStacApi(
        # the documentation page (`settings.docs_url`) is the web face's (Swagger UI
        # from our own files), not FastAPI's (from a CDN, with an inline script)
        app=FastAPI(openapi_url=settings.openapi_url, docs_url=None, redoc_url=None,
                    root_path=settings.root_path,
                    title=settings.stac_fastapi_title, version=settings.stac_fastapi_version,
                    description=settings.stac_fastapi_description, lifespan=lifespan,
                    telemetry=NATIVE_TELEMETRY_OFF),
        router=APIRouter(prefix=settings.prefix_path),
        settings=settings,
        extensions=application_extensions,
        # the landing page's words given, not left to stock's import-time settings
        client=client(pgstac_search_model=post_request_model,
                      title=settings.stac_fastapi_title,
                      description=settings.stac_fastapi_description,
                      landing_page_id=settings.stac_fastapi_landing_id),
        response_class=JSONResponse,
        items_get_request_model=items_get_request_model,
        search_get_request_model=create_get_request_model(extensions.search),
        search_post_request_model=post_request_model,
        collections_get_request_model=collections_get_request_model,
        middlewares=[
            Middleware(BrotliMiddleware),
            Middleware(ForwardedHeaders),  # stock's, passed by where no proxy forwarded
            Middleware(CrossOrigin, allow_origins=settings.cors_origins,
                       allow_origin_regex=settings.cors_origin_regex,
                       allow_methods=settings.cors_methods,
                       allow_credentials=settings.cors_credentials,
                       allow_headers=settings.cors_headers, max_age=600),
        ],
        health_check=health_check,  # type: ignore[arg-type]
        add_metrics=settings.enable_metrics,
    )
