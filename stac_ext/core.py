"""Reads: stock stac-fastapi-pgstac, plus the `owner` filter and generated item content."""

from __future__ import annotations

from typing import Any

import attr
from fastapi import Request
from pydantic import BaseModel
from stac_fastapi.pgstac.core import CoreCrudClient
from stac_fastapi.types.errors import InvalidQueryParameter
from stac_fastapi.types.requests import get_base_url
from stac_fastapi.types.stac import ItemCollection

from stac_ext.content import ItemDecorator
from stac_ext.owner import fold_owner

GEOJSON_TYPES = {"Point", "MultiPoint", "LineString", "MultiLineString", "Polygon",
                 "MultiPolygon", "GeometryCollection"}


@attr.s
class CoreClient(CoreCrudClient):
    """Every item the read endpoints return (item, items, search) passes `_search_base`."""

    decorator: ItemDecorator | None = attr.ib(default=None, kw_only=True)

    def _clean_search_args(  # type: ignore[override]
        self, base_args: dict[str, Any], *args: Any, owner: str | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        clean = super()._clean_search_args(base_args, *args, **kwargs)
        if owner:
            clean["owner"] = owner
        return clean

    async def _search_base(  # type: ignore[override]
        self, search_request: BaseModel, request: Request
    ) -> ItemCollection:
        intersects = getattr(search_request, "intersects", None)
        if intersects is not None and getattr(intersects, "type", None) not in GEOJSON_TYPES:
            raise InvalidQueryParameter("`intersects` must be a GeoJSON geometry: one of "
                                        + ", ".join(sorted(GEOJSON_TYPES)))
        result = await super()._search_base(fold_owner(search_request), request)
        if self.decorator is not None:
            base_url = get_base_url(request)
            for item in result.get("features", []):
                self.decorator.decorate(item, base_url)
        return result
