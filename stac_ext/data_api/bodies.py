"""Request bodies for item writes: the minimal item (no `links`, no `bbox`) is valid."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Annotated, Any

from pydantic import Discriminator, Field, Tag, model_validator
from stac_pydantic import Item
from stac_pydantic.item_collection import ItemCollection
from stac_pydantic.links import Links
from stac_pydantic.version import STAC_VERSION

from stac_ext.data_api.search.world_bounds import on_the_world


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
        out (geojson-pydantic's own `validate_bbox` still checks its order); its instants
        and its bbox checked first (`_checked_item`)."""
        _checked_item(values)
        if isinstance(values, dict) and values.get("geometry") and values.get("bbox") is None:
            bbox = geometry_bbox(values["geometry"])
            if bbox is not None:
                values = {**values, "bbox": bbox}
        if isinstance(values, dict) and "stac_version" not in values:
            values = {**values, "stac_version": STAC_VERSION}
        return values


#: The properties that are instants: RFC 3339 text (a number, or text of digits, was read
#: as seconds since 1970 and stored as such).
INSTANTS = ("datetime", "start_datetime", "end_datetime", "created", "updated")
#: How an instant's text starts: its date (the parser then reads the rest strictly)
DATE_FIRST = re.compile(r"\d{4}-\d{2}-\d{2}(?![0-9])")


def _checked_item(values: Any) -> None:
    """A ValueError (a 400 naming it) for an instant that is no text, or a `bbox` off the
    world (its geometry is range-checked; a bbox of 1.2e59 was stored as sent)."""
    if not isinstance(values, dict):
        return
    properties = values.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    for name in INSTANTS:
        value = properties.get(name)
        if value is not None and not (isinstance(value, str) and DATE_FIRST.match(value)):
            raise ValueError(f"properties.{name}: an RFC 3339 date and time as text (such "
                             f"as 2021-01-01T00:00:00Z), not {json.dumps(value)}")
    bbox = values.get("bbox")
    if isinstance(bbox, list) and len(bbox) in (4, 6) and \
            all(isinstance(v, int | float) for v in bbox) and not on_the_world(bbox):
        raise ValueError("bbox: longitudes within -180 to 180, latitudes within -90 to "
                             "90 (WGS 84 degrees, as the geometry's)")


class ItemCollectionIn(ItemCollection):
    """A FeatureCollection of items to create at once."""

    features: Sequence[ItemIn]


def _kind(body: Any) -> Any:
    """What a POSTed body says it is (its `type`)."""
    return body.get("type") if isinstance(body, dict) else getattr(body, "type", None)


#: An item, or a FeatureCollection of items to create at once, read as what its `type` says
#: it is: a body's errors are those of that reading only (both readings' errors were said,
#: an item's refusal beside "type: Input should be 'FeatureCollection'").
ItemOrItems = Annotated[
    Annotated[ItemIn, Tag("Feature")] | Annotated[ItemCollectionIn, Tag("FeatureCollection")],
    Discriminator(_kind, custom_error_type="invalid_type", custom_error_message=(
        "type: Feature (an item) or FeatureCollection (items to create at once)"))]
