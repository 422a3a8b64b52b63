"""Request bodies for item writes: the minimal item (no `links`, no `bbox`) is valid."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import Field, model_validator
from stac_pydantic import Item
from stac_pydantic.item_collection import ItemCollection
from stac_pydantic.links import Links
from stac_pydantic.version import STAC_VERSION


def _positions(coordinates: Any) -> Iterator[Sequence[float]]:
    if (
        isinstance(coordinates, list | tuple)
        and coordinates
        and all(isinstance(c, int | float) for c in coordinates)
    ):
        yield coordinates
    elif isinstance(coordinates, list | tuple):
        for part in coordinates:
            yield from _positions(part)


def geometry_bbox(geometry: Any) -> list[float] | None:
    """The 2-D bbox of a GeoJSON geometry, or None when it has no usable positions."""
    if not isinstance(geometry, dict):
        return None
    if geometry.get("type") == "GeometryCollection":
        boxes = [b for g in geometry.get("geometries") or [] if (b := geometry_bbox(g))]
        if not boxes:
            return None
        return [min(b[0] for b in boxes), min(b[1] for b in boxes),
                max(b[2] for b in boxes), max(b[3] for b in boxes)]
    points = [p for p in _positions(geometry.get("coordinates")) if len(p) >= 2]
    if not points:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return [min(xs), min(ys), max(xs), max(ys)]


class ItemIn(Item):
    """A STAC item as a client posts it: `links` optional; `bbox`, `stac_version` derived."""

    links: Links = Field(default_factory=lambda: Links([]))

    @model_validator(mode="before")
    @classmethod
    def derive_bbox(cls, values: Any) -> Any:
        """stac-pydantic requires `bbox`: derived from the geometry when a client left it
        out (geojson-pydantic's own `validate_bbox` still checks its order)."""
        if isinstance(values, dict) and values.get("geometry") and values.get("bbox") is None:
            bbox = geometry_bbox(values["geometry"])
            if bbox is not None:
                values = {**values, "bbox": bbox}
        if isinstance(values, dict) and "stac_version" not in values:
            values = {**values, "stac_version": STAC_VERSION}
        return values


class ItemCollectionIn(ItemCollection):
    """A FeatureCollection of items to create at once."""

    features: Sequence[ItemIn]
