"""What a file holds, read lazily: headers, coordinates and row-group statistics only."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from stac_ext.content.formats import Format
from stac_ext.publish.longitudes import lon_extent

MEDIA_TYPES = {Format.netcdf: "application/netcdf", Format.zarr: "application/vnd+zarr",
               Format.parquet: "application/vnd.apache.parquet", Format.csv: "text/csv"}
_LAT = {"latitude", "lat", "nav_lat"}
_LON = {"longitude", "lon", "long", "nav_lon"}


@dataclass
class Variable:
    name: str
    standard_name: str | None
    units: str | None = None
    long_name: str | None = None
    dimensions: list[str] = field(default_factory=list)


@dataclass
class Description:
    """A file's extent and variables, ready to become items."""

    href: str
    format: Format
    bbox: list[float] | None = None
    start: str | None = None
    end: str | None = None
    variables: list[Variable] = field(default_factory=list)
    dimensions: dict[str, Any] = field(default_factory=dict)  # cube:dimensions
    columns: list[dict[str, Any]] = field(default_factory=list)  # table:columns
    row_count: int | None = None


def _iso(value: Any) -> str:
    import pandas as pd

    stamp = pd.Timestamp(value)
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return stamp.isoformat() + "Z"


def coordinate_role(name: str, attrs: dict[str, Any]) -> str | None:
    """"lat", "lon" or "time" when a coordinate (or a column) is one, by its CF attributes
    or its name; else None."""
    standard = str(attrs.get("standard_name", "")).lower()
    units = str(attrs.get("units", "")).lower()
    lower = name.lower()
    if standard == "latitude" or units in ("degrees_north", "degree_north") or lower in _LAT:
        return "lat"
    if standard == "longitude" or units in ("degrees_east", "degree_east") or lower in _LON:
        return "lon"
    if standard == "time" or lower == "time":
        return "time"
    return None


def describe_xarray(ds: Any, href: str, fmt: Format) -> Description:
    """A NetCDF or Zarr dataset opened lazily with xarray."""
    import numpy as np

    description = Description(href=href, format=fmt)
    roles: dict[str, str] = {}
    for name, coord in {**ds.coords, **{k: v for k, v in ds.data_vars.items()
                                         if coordinate_role(str(k), v.attrs)}}.items():
        if role := coordinate_role(str(name), coord.attrs):
            roles.setdefault(role, str(name))
    ranges: dict[str, tuple[Any, Any]] = {}
    for role, name in roles.items():
        values = ds[name].values
        if values.size:
            ranges[role] = (values.min(), values.max())
    if "lat" in ranges and (lons := lon_extent(ds[roles["lon"]].values)) is not None:
        (south, north), (west, east) = ranges["lat"], lons
        description.bbox = [west, float(south), east, float(north)]
    if "time" in ranges and np.issubdtype(ds[roles["time"]].dtype, np.datetime64):
        description.start, description.end = (_iso(t) for t in ranges["time"])
    for dim in ds.sizes:
        if dim == roles.get("lon"):
            entry = {"type": "spatial", "axis": "x", "reference_system": 4326}
        elif dim == roles.get("lat"):
            entry = {"type": "spatial", "axis": "y", "reference_system": 4326}
        elif dim == roles.get("time"):
            entry = {"type": "temporal"}
        else:
            entry = {"type": "other", "description": f"dimension {dim}"}
        role = {roles.get(k): k for k in ("lat", "lon", "time")}.get(str(dim))
        if role in ("lat", "lon"):
            entry["extent"] = [float(ranges[role][0]), float(ranges[role][1])]
        elif role == "time" and description.start:
            entry["extent"] = [description.start, description.end]
        description.dimensions[str(dim)] = entry
    for name, var in ds.data_vars.items():
        if str(name) in roles.values():
            continue
        description.variables.append(Variable(
            name=str(name), standard_name=var.attrs.get("standard_name"),
            units=var.attrs.get("units"), long_name=var.attrs.get("long_name"),
            dimensions=[str(d) for d in var.dims]))
    return description


def describe_parquet(parquet_file: Any, href: str) -> Description:
    """A Parquet file: its schema, field metadata and row-group statistics."""
    schema = parquet_file.schema_arrow
    metadata = parquet_file.metadata
    description = Description(href=href, format=Format.parquet, row_count=metadata.num_rows)
    stats: dict[str, list[Any]] = {}
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for column in range(row_group.num_columns):
            chunk = row_group.column(column)
            if chunk.statistics is not None and chunk.statistics.has_min_max:
                stats.setdefault(chunk.path_in_schema, []).extend(
                    [chunk.statistics.min, chunk.statistics.max])
    roles: dict[str, str] = {}
    for f in schema:
        attrs = {k.decode(): v.decode() for k, v in (f.metadata or {}).items()}
        role = coordinate_role(f.name, attrs)
        if role:
            roles.setdefault(role, f.name)
        description.columns.append({"name": f.name, "type": str(f.type),
                                    **({"description": attrs["long_name"]}
                                       if "long_name" in attrs else {})})
        if not role:
            description.variables.append(Variable(
                name=f.name, standard_name=attrs.get("standard_name"),
                units=attrs.get("units"), long_name=attrs.get("long_name"),
                dimensions=["row"]))
    extent = {role: (min(stats[name]), max(stats[name])) for role, name in roles.items()
              if stats.get(name)}
    if "lat" in extent and "lon" in extent:  # a table's points: its columns' extremes
        west, east = (float(v) for v in extent["lon"])
        if east > 180:  # on 0..360, where along the circle is not known from two numbers
            west, east = -180.0, 180.0
        description.bbox = [west, float(extent["lat"][0]), east, float(extent["lat"][1])]
    if "time" in extent:
        description.start, description.end = (_iso(t) for t in extent["time"])
    return description


def describe_csv(stream: Any, href: str) -> Description:
    """A CSV file: its header only (CSV carries no CF metadata and no statistics)."""
    import pyarrow.csv as pacsv

    reader = pacsv.open_csv(stream)
    description = Description(href=href, format=Format.csv)
    description.columns = [{"name": f.name, "type": str(f.type)} for f in reader.schema]
    return description


def valid_bbox(bbox: list[float] | None) -> bool:
    """A STAC bbox: west > east is one across the antimeridian."""
    return bbox is not None and all(math.isfinite(v) for v in bbox) and \
        -180 <= bbox[0] <= 180 and -180 <= bbox[2] <= 180 and -90 <= bbox[1] <= bbox[3] <= 90
