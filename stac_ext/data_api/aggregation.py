"""The Aggregation extension (`/aggregate`, `/aggregations`, and per collection): counts and
extents of a search's matches, with every search parameter as the filter (facets follow the
search), computed over the search index in one pass (`geocatalog.aggregate`): exactly, or for
a search of many matches from the index's sample, each aggregation then marked approximate.

Stock's extension gives the routes; its request models are widened here to the search's own
(free text, filter, query, owner...), and its client answers from the database.
"""

from __future__ import annotations

import re
from typing import Any, cast

import attr
import orjson
from fastapi import FastAPI, Request
from pydantic import BaseModel
from stac_fastapi.api.models import CollectionUri, EmptyRequest, create_request_model
from stac_fastapi.api.routes import create_async_endpoint
from stac_fastapi.extensions.aggregation import AggregationExtension
from stac_fastapi.extensions.aggregation.client import AsyncBaseAggregationClient
from stac_fastapi.extensions.aggregation.request import (
    AggregationExtensionGetRequest,
    AggregationExtensionPostRequest,
)
from stac_fastapi.pgstac.types.search import PgstacSearch
from stac_fastapi.types.errors import InvalidQueryParameter, NotFoundError
from stac_fastapi.types.extension import ApiExtension
from stac_fastapi.types.requests import get_base_url
from stac_fastapi.types.search import APIRequest

from stac_ext.data_api import queries
from stac_ext.data_api.datetime_param import DATETIME_REFUSALS, refused_datetime
from stac_ext.data_api.read_client import CoreClient
from stac_ext.platform.service.client_gone import unless_client_leaves

#: Always offered, by name: their data type
AGGREGATIONS = {
    "total_count": "integer",
    "datetime_min": "datetime",
    "datetime_max": "datetime",
    "spatial_extent": "bbox",
    "collection_frequency": "frequency_distribution",
    "datetime_frequency": "frequency_distribution",  # by month
    "datetime_yearly_frequency": "frequency_distribution",
}
#: A property the settings name as an aggregation's (`<property>_frequency`)
PROPERTY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_:.-]{0,63}")
#: Term buckets of an aggregation at most (the rest is its `overflow`)
MAX_BUCKETS = 1000


def offered(properties: list[str]) -> dict[str, str]:
    """Every aggregation offered: the fixed ones, then one per property."""
    return {**AGGREGATIONS, **{f"{p}_frequency": "frequency_distribution"
                               for p in properties}}


class AggregationClient(AsyncBaseAggregationClient):
    """Answers the routes from `geocatalog.aggregate`, the search taken as `reader` takes
    it (the same checks and folding as `/search`)."""

    def __init__(self, reader: CoreClient, properties: list[str], exact_up_to: int) -> None:
        for name in properties:
            if not PROPERTY_NAME.fullmatch(name):
                raise ValueError(f"AGGREGATION_PROPERTIES: {name!r} is no property name")
        self.reader = reader
        self.offered = offered(properties)
        self.exact_up_to = exact_up_to

    def _names(self, collection_id: str | None) -> dict[str, str]:
        if collection_id is None:
            return self.offered
        return {k: v for k, v in self.offered.items() if k != "collection_frequency"}

    @staticmethod
    async def _known(conn: Any, collection_id: str | None) -> None:
        if collection_id is not None and \
                not await conn.fetchval(queries.COLLECTION_EXISTS, collection_id):
            raise NotFoundError(f"Collection {collection_id} does not exist.")

    def _links(self, request: Request) -> list[dict[str, Any]]:
        base = get_base_url(request)
        return [{"rel": "root", "type": "application/json", "href": base},
                {"rel": "self", "type": "application/json", "href": str(request.url)}]

    # `type: ignore[override]` below: stock's signatures spell out its own request models'
    # parameters; these are called as its routes call them (a POST body positionally,
    # GET parameters and the request by name) with the search's wider models.

    async def get_aggregations(  # type: ignore[override]
        self, collection_id: str | None = None, request: Request | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        assert request is not None
        async with request.app.state.get_connection(request, "r") as conn:
            await self._known(conn, collection_id)
        return {"type": "AggregationCollection",
                "aggregations": [{"name": name, "data_type": kind}
                                 for name, kind in self._names(collection_id).items()],
                "links": self._links(request)}

    async def aggregate(  # type: ignore[override]
        self, search_request: BaseModel | None = None, request: Request | None = None,
        aggregations: list[str] | None = None, **kwargs: Any,
    ) -> dict[str, Any]:
        """The aggregations asked for (by default every one offered) of the search given
        as a POST body (`search_request`) or GET parameters (`kwargs`)."""
        assert request is not None
        collection_id = request.path_params.get("collection_id")
        if search_request is not None:
            aggregations = getattr(search_request, "aggregations", None)
            search = cast(PgstacSearch, search_request)
        else:
            search = self.reader.get_search_request(**kwargs)
        names = self._names(collection_id)
        asked = list(dict.fromkeys(aggregations or names))
        if unknown := [name for name in asked if name not in names]:
            raise InvalidQueryParameter(
                f"aggregations: {', '.join(unknown)} not offered here; offered: "
                f"{', '.join(names)} (see aggregations).")
        if collection_id is not None:
            search = search.model_copy(update={"collections": [collection_id]})
        body = self.reader.search_body(search, request)

        async def read() -> Any:
            async with request.app.state.get_connection(request, "r") as conn:
                await self._known(conn, collection_id)
                return await conn.fetchval(queries.AGGREGATE, body, asked, MAX_BUCKETS,
                                          self.exact_up_to)

        try:
            found = await unless_client_leaves(request, read())
        except DATETIME_REFUSALS as e:
            raise refused_datetime(e, search.datetime) from e
        return {"type": "AggregationCollection", "aggregations": orjson.loads(found),
                "links": self._links(request)}


@attr.s
class Aggregations(AggregationExtension):
    """Stock's routes, with `/aggregations` (a description of what is offered) answering
    GET only: stock's one route for GET and POST gave both the same OpenAPI operation id,
    which OpenAPI requires to be unique."""

    def register(self, app: FastAPI) -> None:
        self.router.prefix = app.state.router_prefix
        described: list[tuple[str, type[APIRequest]]] = [
            ("/aggregations", EmptyRequest),
            ("/collections/{collection_id}/aggregations", CollectionUri)]
        for path, described_by in described:
            self.router.add_api_route(
                name="Aggregations", path=path, methods=["GET"],
                endpoint=create_async_endpoint(self.client.get_aggregations, described_by))
        asked: list[tuple[str, type[APIRequest] | type[BaseModel]]] = [
            ("GET", self.GET), ("POST", self.POST)]
        for path in ("/aggregate", "/collections/{collection_id}/aggregate"):
            for method, asked_by in asked:
                self.router.add_api_route(
                    name="Aggregate", path=path, methods=[method],
                    endpoint=create_async_endpoint(self.client.aggregate, asked_by))
        app.include_router(self.router, tags=["Aggregation Extension"])


def aggregation_extension(search: list[ApiExtension], post_model: type[PgstacSearch],
                          properties: list[str], exact_up_to: int) -> AggregationExtension:
    """Our routes of stock's extension, its GET and POST models those of the search
    (`search`'s extensions, `post_model`) with `aggregations`; an aggregation with criteria
    reads about `exact_up_to` rows at most (beyond, a sample's counts)."""
    extension = Aggregations(client=AggregationClient(
        CoreClient(pgstac_search_model=post_model), properties, exact_up_to))
    extension.GET = cast(type[APIRequest], create_request_model(
        "AggregateGetRequest", base_model=AggregationExtensionGetRequest, extensions=search,
        request_type="GET"))
    extension.POST = cast(type[BaseModel], create_request_model(
        "AggregatePostRequest", base_model=post_model,
        mixins=[cast(type[BaseModel], AggregationExtensionPostRequest)], request_type="POST"))
    return extension
