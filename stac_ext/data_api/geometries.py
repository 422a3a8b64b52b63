"""The geometries an item may have: GeoJSON positions in WGS 84 longitude and latitude
(RFC 7946), finite and in range, forming a valid geometry (no self-intersection, rings
that close), checked with shapely; the answer names the problem and where it is."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import shapely
from shapely.geometry import shape


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


def geometry_problem(geometry: dict[str, Any]) -> str | None:
    """What makes the geometry unusable, or None."""
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
