"""A search's places on the one coordinate system it reads, CRS84 (longitude, latitude in
degrees): an `intersects` geometry's positions within the world as a `bbox` is, a
collections listing's `bbox` as a search's, a `bbox` with heights searched by its
footprint, and a `filter-crs` other than CRS84 refused (a 400, not a filter read in the
wrong axes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stac_fastapi.types.errors import InvalidQueryParameter

#: The CRS a filter's geometries are read in, as OGC names it (its http and https forms).
CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
_CRS84_NAMES = {CRS84, CRS84.replace("http:", "https:", 1), "OGC:CRS84"}
_OUTSIDE = "must be within (-180, -90, 180, 90)"


def within_world(geometry: Any, name: str = "intersects") -> None:
    """A 400 for a geometry (GeoJSON, a dict or a geojson-pydantic model) with a position
    off the world's longitudes and latitudes."""
    found = geometry if isinstance(geometry, dict) else geometry.model_dump()
    parts = found.get("geometries") or ()
    for part in parts if found.get("type") == "GeometryCollection" else ():
        within_world(part, name)
    if not _inside(found.get("coordinates") or ()):
        raise InvalidQueryParameter(f"{name}: the coordinates {_OUTSIDE} (longitude, "
                                    "latitude in degrees).")


def _inside(coordinates: Sequence[Any]) -> bool:
    if coordinates and not isinstance(coordinates[0], (list, tuple)):  # a position
        return -180 <= coordinates[0] <= 180 and -90 <= coordinates[1] <= 90
    return all(_inside(inner) for inner in coordinates)


def world_box(bbox: Sequence[float] | None) -> None:
    """A 400 for a `bbox` off the world or south of its south (its west may be east of its
    east: across 180°)."""
    if bbox is None:
        return
    if not on_the_world(bbox):
        raise InvalidQueryParameter(f"bbox: Bounding box {_OUTSIDE}")
    half = len(bbox) // 2
    south, north = bbox[1], bbox[half + 1]
    if south > north:
        raise InvalidQueryParameter(f"bbox: Maximum latitude ({north}) must be greater than "
                                    f"minimum latitude ({south})")


def on_the_world(bbox: Sequence[float]) -> bool:
    """Whether a bbox (four numbers, or six with heights) has its longitudes within -180 to
    180 and its latitudes within -90 to 90."""
    half = len(bbox) // 2
    return all(-180 <= bbox[i] <= 180 for i in (0, half)) and \
        all(-90 <= bbox[i] <= 90 for i in (1, half + 1))


def crs84_only(filter_crs: str | None) -> None:
    """A 400 for a `filter-crs` other than CRS84, the only one filters are read in."""
    if filter_crs is not None and filter_crs.strip() not in _CRS84_NAMES:
        raise InvalidQueryParameter(f"filter-crs: this service reads filters in {CRS84} "
                                    "(longitude, latitude in degrees) only.")


def footprint(bbox: Sequence[float] | None) -> list[float] | None:
    """A `bbox` as the four numbers the database searches: one with heights (six numbers)
    by its footprint, as footprints are stored (its heights made a solid the database
    cannot intersect: a 500)."""
    if bbox is None or len(bbox) != 6:
        return None if bbox is None else list(bbox)
    return [bbox[0], bbox[1], bbox[3], bbox[4]]
