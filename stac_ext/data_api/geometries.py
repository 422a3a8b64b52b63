"""The geometries an item may have: GeoJSON positions in WGS 84 longitude and latitude
(RFC 7946), finite and in range, forming a valid geometry (no self-intersection, rings
that close), checked with shapely; the answer names the problem and where it is.

`geometry_problems` answers the same for many geometries at a bulk load's pace: GEOS reads
and checks them all in one call, and only those it flags are looked at one by one.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import orjson
import shapely
from shapely.geometry import shape

GEOMETRY_TYPES = frozenset({"Point", "MultiPoint", "LineString", "MultiLineString",
                            "Polygon", "MultiPolygon", "GeometryCollection"})


def _positions(coordinates: Any) -> Iterator[list[Any]]:
    stack = [coordinates]
    while stack:
        node = stack.pop()
        if isinstance(node, list) and node and not isinstance(node[0], list):
            yield node
        elif isinstance(node, list):
            stack.extend(node)


def _all_positions(geometry: dict[str, Any]) -> Iterator[list[Any]]:
    if geometry.get("type") == "GeometryCollection":
        for part in geometry.get("geometries") or []:
            if isinstance(part, dict):
                yield from _all_positions(part)
    else:
        yield from _positions(geometry.get("coordinates"))


def _typed(geometry: Any) -> bool:
    """A JSON object naming a GeoJSON geometry type."""
    return isinstance(geometry, dict) and geometry.get("type") in GEOMETRY_TYPES


def geometry_problem(geometry: Any) -> str | None:
    """What makes the geometry unusable, or None."""
    if not isinstance(geometry, dict):
        return "it is not a GeoJSON object"
    if not _typed(geometry):
        return f"its type {geometry.get('type')!r} is not a GeoJSON geometry type"
    for position in _all_positions(geometry):
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in position):
            return f"the position {position} holds a number that is not finite"
        if len(position) >= 2 and not (-180 <= position[0] <= 180 and -90 <= position[1] <= 90):
            where = ", ".join(f"{v:g}" for v in position[:2])
            return (f"the position ({where}) is outside longitude -180..180 and "
                    "latitude -90..90 (WGS 84, RFC 7946)")
    try:
        reason = shapely.is_valid_reason(shape(geometry))
    except (ValueError, TypeError, AttributeError, shapely.errors.ShapelyError) as e:
        return f"it is not a geometry shapely can read ({e})"
    return None if reason == "Valid Geometry" else str(reason)


def _geojson(geometry: Any) -> bytes:
    """The text GEOS reads; empty (unreadable) for what is not a geometry object."""
    if not _typed(geometry):
        return b""
    try:
        return orjson.dumps(geometry)
    except TypeError:  # an integer beyond 64 bits
        return b""


def geometry_problems(geometries: Sequence[Any]) -> list[str | None]:
    """`geometry_problem` of each geometry. Whatever GEOS cannot read, finds invalid, or
    holds a position out of range is checked alone: the answers are the same."""
    if not geometries:
        return []
    shapes = shapely.from_geojson([_geojson(g) for g in geometries], on_invalid="ignore")
    flagged = shapely.is_missing(shapes) | ~shapely.is_valid(shapes)
    coordinates, owners = shapely.get_coordinates(shapes, return_index=True)
    outside = (~np.isfinite(coordinates).all(axis=1) | (np.abs(coordinates[:, 0]) > 180)
               | (np.abs(coordinates[:, 1]) > 90))
    flagged[owners[outside]] = True
    answers: list[str | None] = [None] * len(geometries)
    for n in np.flatnonzero(flagged).tolist():
        answers[n] = geometry_problem(geometries[n])
    return answers
