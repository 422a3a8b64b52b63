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
    media_type = asset.get("type")
    if type(media_type) is str and media_type in _MEDIA_TYPES:
        return _MEDIA_TYPES[media_type]  # as `_format` says, without hashing the href
    return _format(str(media_type or ""), str(asset.get("href") or ""))


@lru_cache(maxsize=8192)  # a pure function of two strings: the same assets come back often
def _format(media_type: str, href: str) -> Format | None:
    media_type = media_type.split(";")[0].strip().lower()
    if media_type in _MEDIA_TYPES:
        return _MEDIA_TYPES[media_type]
    path = urlsplit(href).path.rstrip("/").lower()
    dot = path.rfind(".")
    return _SUFFIXES.get(path[dot:]) if dot >= 0 else None
