"""The Sort extension's sortables (`/sortables`, `/collections/{id}/sortables`): what
`sortby` accepts on item searches and items pages, which is what the search index keeps
in order (its indexes on datetime, id, collection and owner). Any other field is a 400
naming these: sorting a million items by an unindexed property reads them all."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from stac_fastapi.extensions.sort import (
    ItemCollectionSortExtension,
    SearchSortExtension,
    SortConformanceClasses,
)
from stac_fastapi.extensions.sort.client import AsyncBaseSortablesClient
from stac_fastapi.types.errors import InvalidQueryParameter, NotFoundError
from stac_fastapi.types.requests import get_base_url

from stac_ext.data_api import queries

#: Each sortable field, as JSON Schema (the index that keeps its order)
SORTABLES: dict[str, dict[str, Any]] = {
    "datetime": {"title": "Date and time", "type": "string", "format": "date-time"},
    "id": {"title": "Item ID", "type": "string"},
    "collection": {"title": "Collection ID", "type": "string"},
    "owner": {"title": "Owner", "type": "string"},
}

#: The Sort extension 1.0's classes too: the same `sortby`, and what pystac-client looks
#: for (it knows STAC API 1.0 URIs only, and warned "does not conform to SORT")
SEARCH_SORT_CLASSES = [SortConformanceClasses.ITEM_SEARCH_SORT,
                       SortConformanceClasses.ITEM_SEARCH_SORTABLES,
                       "https://api.stacspec.org/v1.0.0/item-search#sort"]
ITEMS_SORT_CLASSES = [SortConformanceClasses.FEATURES_SORT,
                      SortConformanceClasses.FEATURES_SORTABLES,
                      "https://api.stacspec.org/v1.0.0/ogcapi-features#sort"]


def sortable_field(field: str) -> str:
    """`field` of a `sortby` as the sortables name it (`properties.` dropped), or a 400."""
    name = field.removeprefix("properties.")
    if name not in SORTABLES:
        raise InvalidQueryParameter(
            f"sortby: {field} is not sortable; sortable fields: {', '.join(SORTABLES)} "
            "(see /sortables).")
    return name


def _schema(href: str) -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": href,
            "type": "object", "title": "Sortables", "properties": SORTABLES,
            "additionalProperties": False}


class SortablesClient(AsyncBaseSortablesClient):
    async def get_sortables(self, request: Request | None = None,
                            **kwargs: Any) -> dict[str, Any]:
        assert request is not None
        return _schema(f"{get_base_url(request)}sortables")

    async def get_collection_sortables(self, collection_id: str,
                                       request: Request | None = None,
                                       **kwargs: Any) -> dict[str, Any]:
        assert request is not None
        async with request.app.state.get_connection(request, "r") as conn:
            if not await conn.fetchval(queries.COLLECTION_EXISTS, collection_id):
                raise NotFoundError(f"Collection {collection_id} does not exist.")
        return _schema(f"{get_base_url(request)}collections/{collection_id}/sortables")


def search_sort() -> SearchSortExtension:
    return SearchSortExtension(client=SortablesClient(),
                               conformance_classes=SEARCH_SORT_CLASSES)


def items_sort() -> ItemCollectionSortExtension:
    return ItemCollectionSortExtension(client=SortablesClient(),
                                       conformance_classes=ITEMS_SORT_CLASSES)
