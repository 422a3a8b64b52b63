"""STAC items from file descriptions: one per variable that carries a CF standard_name."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from stac_ext.content.formats import Format
from stac_ext.data_api.collection_ids import collection_id
from stac_ext.publish.inspect import MEDIA_TYPES, Description, Variable, valid_bbox
from stac_ext.publish.longitudes import footprint

CONVENTION = "climate_forecast"
#: A CF standard name's shape (CF's hold capitals: `..._13C_...`); the collection's id
#: holds it lower-cased.
STANDARD_NAME = re.compile(r"^[A-Za-z0-9_]+$")


@dataclass(frozen=True)
class Skip:
    variable: str
    reason: str


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "data"


def item_id(href: str, variable: str) -> str:
    """Stable for a file and a variable, so that a re-run updates instead of duplicating."""
    path = urlsplit(href).path.rstrip("/")
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    digest = hashlib.sha256(href.encode()).hexdigest()[:10]
    return f"{_slug(stem)[:60]}-{digest}-{_slug(variable)[:60]}"


def file_name(href: str) -> str:
    return urlsplit(href).path.rstrip("/").rsplit("/", 1)[-1] or href


def build_items(description: Description, title_prefix: str | None
                ) -> tuple[list[tuple[str, dict[str, Any]]], list[Skip]]:
    """[(collection id, item)] for the file's variables, and what was skipped, with why."""
    items: list[tuple[str, dict[str, Any]]] = []
    skipped: list[Skip] = []
    missing = None
    if not valid_bbox(description.bbox):
        missing = "no latitude/longitude extent (an item needs a geometry)"
    elif not description.start:
        missing = "no time coordinate (an item needs a datetime)"
    for variable in description.variables:
        if missing and variable.standard_name:
            skipped.append(Skip(variable.name, missing))
        elif not variable.standard_name:
            skipped.append(Skip(variable.name, "no CF standard_name"))
        elif not STANDARD_NAME.match(variable.standard_name):
            skipped.append(Skip(variable.name, f"standard_name {variable.standard_name!r} "
                                "is not a CF standard name"))
        else:
            items.append((collection_id(CONVENTION, variable.standard_name.lower()),
                          _item(description, variable, title_prefix)))
    return items, skipped


def _item(description: Description, variable: Variable, title_prefix: str | None
          ) -> dict[str, Any]:
    west, south, east, north = description.bbox or [0, 0, 0, 0]
    properties: dict[str, Any] = {
        "title": " - ".join(filter(None, [title_prefix, variable.long_name or variable.name,
                                          file_name(description.href)])),
        "cf:parameter": [{"name": variable.standard_name,
                          **({"unit": variable.units} if variable.units else {})}],
    }
    if description.start and description.start != description.end:
        properties.update(datetime=None, start_datetime=description.start,
                          end_datetime=description.end)
    else:
        properties["datetime"] = description.start
    if description.format in (Format.netcdf, Format.zarr):
        properties["cube:dimensions"] = {d: description.dimensions[d]
                                         for d in variable.dimensions
                                         if d in description.dimensions}
        properties["cube:variables"] = {variable.name: {
            "dimensions": variable.dimensions, "type": "data",
            **({"unit": variable.units} if variable.units else {}),
            **({"description": variable.long_name} if variable.long_name else {})}}
    else:
        properties["table:columns"] = description.columns
        if description.row_count is not None:
            properties["table:row_count"] = description.row_count
    return {
        "type": "Feature", "stac_version": "1.0.0",
        "id": item_id(description.href, variable.name),
        "bbox": [west, south, east, north],
        "geometry": footprint([west, south, east, north]),
        "properties": properties,
        "assets": {"data": {"href": description.href,
                            "type": MEDIA_TYPES[description.format],
                            "title": file_name(description.href), "roles": ["data"]}},
        "links": [],
    }
