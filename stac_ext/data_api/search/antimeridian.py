"""A `bbox` across the antimeridian (its west edge east of its east edge: `170,-10,-170,10`,
as STAC and GeoJSON write such a box) searched as the two boxes it is, on either side of
180°. pgstac makes one envelope of the four numbers, which the database takes corner to
corner: the band from -170° to 170° instead of the 20° across 180°.

The box becomes an `intersects` MultiPolygon of its two halves (a search has one or the
other, never both); every other criterion is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from stac_ext.data_api.search.filters import Search


def crosses(bbox: Sequence[float]) -> bool:
    """Whether `bbox` (2D or 3D) crosses the antimeridian."""
    west, east = bbox[0], bbox[len(bbox) // 2]
    return west > east


def halves(bbox: Sequence[float]) -> dict[str, Any]:
    """The two boxes west and east of 180° that `bbox` (across it) covers, as GeoJSON."""
    west, south = bbox[0], bbox[1]
    east, north = bbox[len(bbox) // 2], bbox[len(bbox) // 2 + 1]
    return {"type": "MultiPolygon", "coordinates": [_ring(west, south, 180.0, north),
                                                    _ring(-180.0, south, east, north)]}


def polygon(bbox: Sequence[float]) -> dict[str, Any]:
    """`bbox` (2D or 3D) as GeoJSON: its footprint's polygon, or its two halves when it
    crosses 180°."""
    if crosses(bbox):
        return halves(bbox)
    west, south = bbox[0], bbox[1]
    east, north = bbox[len(bbox) // 2], bbox[len(bbox) // 2 + 1]
    return {"type": "Polygon", "coordinates": _ring(west, south, east, north)}


def _ring(west: float, south: float, east: float, north: float) -> list[list[list[float]]]:
    return [[[west, south], [east, south], [east, north], [west, north], [west, south]]]


def fold_antimeridian(search: Search) -> Search:
    """The search with a `bbox` across the antimeridian as its two halves' `intersects`."""
    bbox = getattr(search, "bbox", None)
    if bbox is None or not crosses(bbox):
        return search
    # the geometry as the request model's own `intersects` type holds it
    kind = type(search).model_fields["intersects"].annotation
    assert kind is not None  # a search model's `intersects` is typed
    geometry = TypeAdapter(kind).validate_python(halves(bbox))
    return search.model_copy(update={"bbox": None, "intersects": geometry})
