"""The stock Transaction extension with our bodies (minimal items) and status codes."""

from __future__ import annotations

from typing import Annotated

import attr
from fastapi import Body, Query
from stac_fastapi.api.models import CollectionUri, ItemUri
from stac_fastapi.api.routes import create_async_endpoint
from stac_fastapi.extensions.transaction import TransactionExtension
from stac_pydantic import Item
from stac_pydantic.shared import MimeTypes
from starlette.responses import Response

from stac_ext.models import ItemCollectionIn, ItemIn


@attr.s
class PostItem(CollectionUri):
    """Create an item (or a FeatureCollection of items) in a collection."""

    item: Annotated[ItemIn | ItemCollectionIn, Body()] = attr.ib(default=None)


@attr.s
class PutItem(ItemUri):
    """Replace an item."""

    item: Annotated[ItemIn, Body()] = attr.ib(default=None)


@attr.s
class DeleteCollection(CollectionUri):
    """Delete a collection; `_force=true` also when it still holds items."""

    force: Annotated[bool, Query(alias="_force", description="Delete even when the "
                                 "collection still holds items (they go with it).")] = attr.ib(
        default=False
    )


@attr.s
class ItemTransactionExtension(TransactionExtension):
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

    def register_delete_collection(self) -> None:
        self.router.add_api_route(
            name="Delete Collection",
            path="/collections/{collection_id}",
            responses={200: {"content": {MimeTypes.json.value: {}}}},
            response_class=self.response_class,
            methods=["DELETE"],
            endpoint=create_async_endpoint(self.client.delete_collection, DeleteCollection),
            dependencies=self.route_dependencies,
        )
