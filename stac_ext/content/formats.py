"""Which data format an asset holds, from its media type or its href's suffix."""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit


class Format(StrEnum):
    netcdf = "netcdf"
    zarr = "zarr"
    parquet = "parquet"
    csv = "csv"


_MEDIA_TYPES = {
    "application/netcdf": Format.netcdf, "application/x-netcdf": Format.netcdf,
    "application/vnd+zarr": Format.zarr, "application/vnd.zarr": Format.zarr,
    "application/vnd.apache.parquet": Format.parquet, "application/x-parquet": Format.parquet,
    "text/csv": Format.csv,
}
_SUFFIXES = {
    ".nc": Format.netcdf, ".nc4": Format.netcdf, ".netcdf": Format.netcdf,
    ".zarr": Format.zarr, ".parquet": Format.parquet, ".geoparquet": Format.parquet,
    ".csv": Format.csv,
}


def asset_format(asset: dict[str, Any]) -> Format | None:
    """By the media type when it names a format, else by the href's suffix."""
    return (_media_type_format(str(asset.get("type") or ""))
            or _href_format(str(asset.get("href") or "")))


@lru_cache(maxsize=256)  # a handful of media types, on every asset of every page
def _media_type_format(media_type: str) -> Format | None:
    return _MEDIA_TYPES.get(media_type.split(";")[0].strip().lower())


@lru_cache(maxsize=8192)  # a pure function of a string: the same assets come back often
def _href_format(href: str) -> Format | None:
    path = urlsplit(href).path.rstrip("/").lower()
    dot = path.rfind(".")
    return _SUFFIXES.get(path[dot:]) if dot >= 0 else None
