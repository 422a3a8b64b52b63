"""The stock Transaction extension with our bodies (minimal items) and status codes."""

from __future__ import annotations

from typing import Annotated, Any

import attr
from fastapi import Body, Query
from stac_fastapi.api.models import CollectionUri, ItemUri
from stac_fastapi.extensions.transaction import TransactionExtension
from stac_pydantic import Collection, Item
from stac_pydantic.shared import MimeTypes
from starlette.responses import Response

from stac_ext.data_api.bodies import ItemIn, ItemOrItems
from stac_ext.data_api.stock import create_async_endpoint


@attr.s
class PostItem(CollectionUri):
    """Create an item (or a FeatureCollection of items) in a collection."""

    item: Annotated[ItemOrItems, Body()] = attr.ib(default=None)


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


ITEM = "/collections/{collection_id}/items/{item_id}"
GEOJSON = {"content": {MimeTypes.geojson.value: {}}, "model": Item}


@attr.s
class ItemTransactionExtension(TransactionExtension):
    """Replaces five stock routes: their bodies, status codes and documented responses."""

    def _route(self, name: str, method: str, path: str, handler: Any, request_model: Any,
               status: int, response: dict[str, Any],
               response_class: type[Response] | None = None) -> None:
        self.router.add_api_route(
            name=name, path=path, methods=[method], status_code=status,
            responses={status: response},
            response_class=response_class or self.response_class,
            endpoint=create_async_endpoint(handler, request_model),
            dependencies=self.route_dependencies,
        )

    def register_create_item(self) -> None:
        self._route("Create Item", "POST", "/collections/{collection_id}/items",
                    self.client.create_item, PostItem, 201,
                    {**GEOJSON, "description": "The stored item; `Location` is its URL."})

    def register_update_item(self) -> None:
        self._route("Update Item", "PUT", ITEM, self.client.update_item, PutItem, 200,
                    {**GEOJSON, "description": "The stored item."})

    def register_delete_item(self) -> None:
        self._route("Delete Item", "DELETE", ITEM, self.client.delete_item, ItemUri, 204,
                    {"description": "Item deleted"}, response_class=Response)

    def register_create_collection(self) -> None:
        self._route("Create Collection", "POST", "/collections", self.client.create_collection,
                    Collection, 201, {"content": {MimeTypes.json.value: {}}, "model": Collection,
                                      "description": "The stored collection. GET /collections "
                                      "lists it once it holds an item: empty collections are "
                                      "hidden there (GET /collections/{id} answers at once)."})

    def register_delete_collection(self) -> None:
        self._route("Delete Collection", "DELETE", "/collections/{collection_id}",
                    self.client.delete_collection, DeleteCollection, 200,
                    {"content": {MimeTypes.json.value: {}}, "description": "Deleted."})
