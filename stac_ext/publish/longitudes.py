"""A file's longitudes as a STAC bbox takes them, whatever their convention (-180..180 or
0..360, as global model output writes them): the smallest arc holding them all, the whole
circle for a grid around the globe, and west > east for one across the antimeridian."""

from __future__ import annotations

from typing import Any

from stac_ext.data_api.search.antimeridian import crosses, halves

#: A grid is around the globe when its widest gap is at most this many of its usual steps.
AROUND = 1.5


def lon_extent(values: Any) -> tuple[float, float] | None:
    """(west, east) of longitudes (any array), or None when there are none."""
    import numpy as np

    found = np.asarray(values, dtype="float64").ravel()
    found = found[np.isfinite(found)]
    if not found.size:
        return None
    wrapped = np.unique((found + 180.0) % 360.0 - 180.0)  # in [-180, 180)
    if wrapped.size == 1:
        return float(wrapped[0]), float(wrapped[0])
    gaps = np.diff(np.append(wrapped, wrapped[0] + 360.0))  # the last: round the back
    widest = int(np.argmax(gaps))
    if wrapped.size > 2 and gaps[widest] <= AROUND * float(np.median(gaps)):
        return -180.0, 180.0
    west = float(wrapped[(widest + 1) % wrapped.size])
    east = float(wrapped[widest])
    return west, 180.0 if east == -180.0 else east


def footprint(bbox: list[float]) -> dict[str, Any]:
    """The GeoJSON geometry of a bbox: a polygon, or two either side of the antimeridian
    (as a search takes such a box)."""
    if crosses(bbox):
        return halves(bbox)
    west, south, east, north = bbox
    return {"type": "Polygon",
            "coordinates": [[[west, south], [east, south], [east, north], [west, north],
                             [west, south]]]}
