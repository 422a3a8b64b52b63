"""Item and collection writes: stock stac-fastapi-pgstac transactions with SPEC's rules.

- POST an item: the minimal SPEC item (no `links`) is accepted; 201 with `Location`.
- DELETE an item: 204 No Content.
"""

from __future__ import annotations

from typing import Annotated, Any

import attr
from fastapi import Body, Request
from stac_fastapi.api.models import CollectionUri, ItemUri
from stac_fastapi.api.routes import create_async_endpoint
from stac_fastapi.extensions.transaction import TransactionExtension
from stac_fastapi.pgstac.transactions import TransactionsClient as StockTransactionsClient
from stac_fastapi.types.errors import NotFoundError
from stac_fastapi.types.requests import get_base_url
from stac_pydantic import Item
from stac_pydantic.shared import MimeTypes
from starlette.responses import JSONResponse, Response

from stac_ext import queries
from stac_ext.models import ItemCollectionIn, ItemIn


def item_url(request: Request, collection_id: str, item_id: str) -> str:
    return f"{get_base_url(request)}collections/{collection_id}/items/{item_id}"


@attr.s
class TransactionsClient(StockTransactionsClient):
    """Stock pgstac writes; the HTTP shape of create and delete follows DESIGN.md."""

    async def _require_collection(self, request: Request, collection_id: str) -> None:
        async with request.app.state.get_connection(request, "r") as conn:
            if not await conn.fetchval(queries.COLLECTION_EXISTS, collection_id):
                raise NotFoundError(f"Collection {collection_id} does not exist.")

    async def create_item(  # type: ignore[override]
        self, collection_id: str, item: ItemIn | ItemCollectionIn, request: Request, **kwargs: Any
    ) -> Response:
        await self._require_collection(request, collection_id)
        created = await super().create_item(collection_id, item, request, **kwargs)
        if isinstance(created, Response):  # a FeatureCollection: no single resource
            return created
        return JSONResponse(
            created,
            status_code=201,
            media_type=MimeTypes.geojson.value,
            headers={"Location": item_url(request, collection_id, created["id"])},
        )

    async def delete_item(  # type: ignore[override]
        self, item_id: str, collection_id: str, request: Request, **kwargs: Any
    ) -> Response:
        await super().delete_item(item_id, collection_id, request, **kwargs)
        return Response(status_code=204)


@attr.s
class PostItem(CollectionUri):
    """Create an item (or a FeatureCollection of items) in a collection."""

    item: Annotated[ItemIn | ItemCollectionIn, Body()] = attr.ib(default=None)


@attr.s
class PutItem(ItemUri):
    """Replace an item."""

    item: Annotated[ItemIn, Body()] = attr.ib(default=None)


@attr.s
class ItemTransactionExtension(TransactionExtension):
    """The stock Transaction extension with our item bodies and status codes."""

    def register_create_item(self) -> None:
        self.router.add_api_route(
            name="Create Item",
            path="/collections/{collection_id}/items",
            status_code=201,
            responses={201: {"content": {MimeTypes.geojson.value: {}}, "model": Item,
                             "description": "The stored item; `Location` is its URL."}},
            response_class=self.response_class,
            methods=["POST"],
            endpoint=create_async_endpoint(self.client.create_item, PostItem),
            dependencies=self.route_dependencies,
        )

    def register_update_item(self) -> None:
        self.router.add_api_route(
            name="Update Item",
            path="/collections/{collection_id}/items/{item_id}",
            responses={200: {"content": {MimeTypes.geojson.value: {}}, "model": Item}},
            response_class=self.response_class,
            methods=["PUT"],
            endpoint=create_async_endpoint(self.client.update_item, PutItem),
            dependencies=self.route_dependencies,
        )

    def register_delete_item(self) -> None:
        self.router.add_api_route(
            name="Delete Item",
            path="/collections/{collection_id}/items/{item_id}",
            status_code=204,
            responses={204: {"description": "Item deleted"}},
            response_class=Response,
            methods=["DELETE"],
            endpoint=create_async_endpoint(self.client.delete_item, ItemUri),
            dependencies=self.route_dependencies,
        )
