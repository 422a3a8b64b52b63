"""The `/data` STAC API: stock stac-fastapi-pgstac, built with our clients and extensions.

Our extensions go through stock's extension maps (`search_map`, `item_collection_map`,
`extra_map`), so `ENABLED_EXTENSIONS` switches them as it switches stock's (keys: `owner`,
`single_value_lists`, and those the composition root puts in `extra_map`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from functools import partial

from fastapi import Depends, FastAPI
from fastapi.routing import APIRoute
from stac_fastapi.api.app import StacApi
from stac_fastapi.api.models import JSONResponse
from stac_fastapi.api.routes import Scope
from stac_fastapi.extensions import BulkTransactionExtension
from stac_fastapi.extensions.query import QueryConformanceClasses
from stac_fastapi.pgstac.models.extensions import Extensions
from stac_fastapi.types.extension import ApiExtension
from starlette.routing import BaseRoute

from stac_ext.data_api.aggregation import aggregation_extension
from stac_ext.data_api.datetime_param import valid_datetime
from stac_ext.data_api.item_links import Decorator
from stac_ext.data_api.policy import DataPolicy
from stac_ext.data_api.queryables import QueryablesClient
from stac_ext.data_api.read_client import CoreClient
from stac_ext.data_api.rendered_items import RenderedItems
from stac_ext.data_api.request_checks import CheckedRoute, RequestCheck, all_of
from stac_ext.data_api.search.free_text import (
    items_free_text,
    search_body,
    search_free_text,
)
from stac_ext.data_api.search.owner import OwnerSearchExtension
from stac_ext.data_api.search.query_operators import FullQueryExtension
from stac_ext.data_api.search.single_value_lists import SingleValueListsExtension
from stac_ext.data_api.search.text_filter import TextSearchFilterExtension
from stac_ext.data_api.settings import DataApiSettings
from stac_ext.data_api.sortables import items_sort, search_sort
from stac_ext.data_api.stock import instantiate_api
from stac_ext.data_api.unknown_params import no_unknown_query_params
from stac_ext.data_api.write_client import (
    BulkTransactionsClient,
    CollectionRule,
    TransactionsClient,
)
from stac_ext.data_api.write_routes import ItemTransactionExtension
from stac_ext.platform.service.json_body import json_object_body

#: The features endpoints, which refuse query parameters they do not define
ITEM_PATHS = ("/collections/{collection_id}/items", "/collections/{collection_id}/items/{item_id}")
#: The GET endpoints that take a `datetime` parameter
DATETIME_PATHS = ("/search", "/collections", "/collections/{collection_id}/items",
                  "/catalogs/{path:path}/_search", "/aggregate",
                  "/collections/{collection_id}/aggregate")


@dataclass
class DataExtensions(Extensions):
    """Stock's extensions, with ours in its maps and our transaction clients."""

    policy: DataPolicy = field(kw_only=True)
    decorator: Decorator | None = None
    #: Items kept as served, for every client of the API (item pages, searches, scopes)
    rendered: RenderedItems | None = None
    owner_search: bool = True
    #: properties counted by value in `/aggregate`
    aggregation_properties: list[str] = field(default_factory=list)
    #: rows an aggregation with criteria reads at most, about (beyond: a sample's counts)
    aggregate_exact_up_to: int = 2_000
    #: SQL run in an item delete's transaction with ($1 collection, $2 item)
    on_item_delete: list[str] = field(default_factory=list)
    #: What a collection's creation or replacement must also satisfy (its vocabulary)
    collection_rule: CollectionRule | None = None

    def __post_init__(self) -> None:
        self.search_map = {"query": FullQueryExtension(), "free_text": search_free_text(),
                           "filter": TextSearchFilterExtension(client=QueryablesClient()),
                           "sort": search_sort(),
                           "single_value_lists": SingleValueListsExtension(), **self.search_map}
        self.item_collection_map = {
            "query": FullQueryExtension(conformance_classes=[QueryConformanceClasses.ITEMS]),
            "free_text": items_free_text(), "sort": items_sort(), **self.item_collection_map}
        if self.owner_search:
            self.search_map = {"owner": OwnerSearchExtension(), **self.search_map}
        super().__post_init__()
        self.extra_map = {"aggregation": aggregation_extension(
            self.search, search_body(self.search), self.aggregation_properties,
            self.aggregate_exact_up_to),
            **self.extra_map}

    @property
    def transaction(self) -> list[ApiExtension]:
        """Stock's switch (`ENABLE_TRANSACTIONS_EXTENSIONS`), our clients and routes: stock
        offers no map for these."""
        if not self.settings.enable_transactions_extensions:
            return []
        writer = [Depends(self.policy.auth.client(self.policy.client_id))]
        return [
            ItemTransactionExtension(
                client=TransactionsClient(policy=self.policy, decorator=self.decorator,
                                          on_item_delete=self.on_item_delete,
                                          collection_rule=self.collection_rule),
                settings=self.settings, response_class=JSONResponse, route_dependencies=writer,
            ),
            BulkTransactionExtension(client=BulkTransactionsClient(policy=self.policy),
                                     route_dependencies=writer),
        ]

    @property
    def catalog(self) -> list[ApiExtension]:
        """Stock's catalogs extension, only when asked for (stock would log at every start
        that it is off; the settings refuse it beside our catalogs tree)."""
        return super().catalog if self.settings.enable_catalogs_extension else []


def build_data_api(
    settings: DataApiSettings,
    extensions: DataExtensions,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]],
) -> StacApi:
    """The STAC API with its routes under `settings.prefix_path` (`/data`) on a new app."""
    api = instantiate_api(
        client=partial(CoreClient, decorator=extensions.decorator,  # type: ignore[arg-type]  # stock asks for the class; a partial makes the same
                       rendered=extensions.rendered),
        extensions=extensions, lifespan=lifespan, settings=settings,
    )
    prefix = settings.prefix_path
    read = extensions.policy.read_dependency()
    checks: dict[tuple[str, str], list[RequestCheck]] = {}
    for route in _endpoints(api.app.routes):
        for method in sorted(route.methods or ()):
            found = checks.setdefault((route.path, method), [])
            # every route that takes a body (ours, stock's, the extensions'): bounded JSON
            # objects
            if method in ("POST", "PUT", "PATCH"):
                found.append(json_object_body)
            # every read (GET, and the searches and aggregations POST takes): its caller,
            # from an optional token (the visibility of items and catalogs)
            if method == "GET" or (method == "POST" and route.path.endswith(
                    ("/search", "/_search", "/aggregate"))):
                found.append(read)
    for check, paths in ((no_unknown_query_params, ITEM_PATHS),
                         (valid_datetime, DATETIME_PATHS)):
        for path in paths:
            if (prefix + path, "GET") in checks:
                checks[(prefix + path, "GET")].append(check)
    # a route's checks as one: run by the route itself where it is ours, else as one
    # dependency (FastAPI solves each dependency apart, per request)
    for route in _endpoints(api.app.routes):
        if isinstance(route, CheckedRoute):
            own = [check for method in sorted(route.methods or ())  # one: GET
                   for check in checks.pop((route.path, method))]
            route.checks = all_of(own) if own else None
    scopes: dict[tuple[RequestCheck, ...], list[Scope]] = {}
    for (path, method), found in checks.items():
        if found:
            scopes.setdefault(tuple(found), []).append(Scope(path=path, method=method))
    for each, where in scopes.items():
        api.add_route_dependencies(scopes=where, dependencies=[Depends(all_of(each))])
    return api


def _endpoints(routes: Sequence[BaseRoute]) -> Iterator[APIRoute]:
    """Every endpoint route, in included routers too (as stock's `add_route_dependencies`
    walks them)."""
    for route in routes:
        if original := getattr(route, "original_router", None):
            yield from _endpoints(original.routes)
        elif isinstance(route, APIRoute):
            yield route
        elif nested := getattr(route, "routes", None):
            yield from _endpoints(nested)
