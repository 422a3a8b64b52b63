"""An item's quicklook: which of its assets a picture is drawn from, and the `thumbnail`
asset that names where the API serves it (`.../items/{i}/thumbnail.png`)."""

from __future__ import annotations

from typing import Any

from stac_ext.content.formats import Format, asset_format
from stac_ext.data_api.urls import item_path

#: The asset key and role of a quicklook (STAC's common `thumbnail`, which STAC Browser's
#: item cards show).
THUMBNAIL = "thumbnail"
#: The formats the explorer reads, each drawn as a picture.
DRAWN_FORMATS = (Format.zarr, Format.netcdf, Format.parquet, Format.csv)
#: Assets that are pictures or descriptions of the data, never drawn from.
_NOT_DATA = {"thumbnail", "overview", "metadata", "visual"}


def thumbnail_path(collection_id: str, item_id: str) -> str:
    """Where the API serves an item's quicklook, under the API root."""
    return f"{item_path(collection_id, item_id)}/thumbnail.png"


def drawn_asset(item: dict[str, Any]) -> tuple[str, dict[str, Any], Format] | None:
    """The asset a quicklook is drawn from: the first data asset (by role, else any but
    pictures and descriptions) of a format the explorer reads, gridded before tables."""
    assets = item.get("assets")
    if not isinstance(assets, dict):
        return None
    found = []
    for key, asset in assets.items():
        if not isinstance(asset, dict) or not asset.get("href"):
            continue
        roles = set(asset.get("roles") or [])
        fmt = asset_format(asset)
        if fmt is None or roles & _NOT_DATA:
            continue
        found.append((0 if "data" in roles else 1, DRAWN_FORMATS.index(fmt), key, asset, fmt))
    if not found:
        return None
    *_, key, asset, fmt = min(found, key=lambda each: each[:3])
    return key, asset, fmt


def thumbnail_asset(api_root: str, collection_id: str, item_id: str) -> dict[str, Any]:
    """The `thumbnail` asset of an item whose data can be drawn (`api_root`: the data API's
    root URL, ending in `/`)."""
    return {"href": api_root + thumbnail_path(collection_id, item_id), "type": "image/png",
            "title": "Quicklook", "roles": [THUMBNAIL]}


def with_thumbnail(item: dict[str, Any], collection_id: str, api_root: str
                   ) -> dict[str, Any]:
    """The item with a `thumbnail` asset when its data can be drawn and it has none."""
    assets = item.get("assets") or {}
    if THUMBNAIL in assets or drawn_asset(item) is None:
        return item
    return {**item, "assets": {**assets, THUMBNAIL: thumbnail_asset(
        api_root, collection_id, str(item["id"]))}}
