"""Zarr and NetCDF, read with xarray: what a dataset holds (variables, dimensions,
attributes, sizes), a variable's map at a time and a level, its time series at a point.
Opened lazily and read chunk-wise: a map reads the chunks of one time step, a series those
of one column of the grid, and what either would read is weighed before it is read; a
dataset stays open a moment for the next request (`grids.Grids`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from stac_ext.content.formats import Format
from stac_ext.explorer.bounds import Budget
from stac_ext.explorer.pictures import colorbar_url, data_url, field_png, quicklook_map
from stac_ext.explorer.problems import ExploreError
from stac_ext.publish.inspect import coordinate_role

#: A map's longest side in pixels: a larger grid is drawn every n-th cell.
MAP_PIXELS = 1024
#: Time values listed by a description at most (a slider's stops).
TIME_VALUES = 100_000
#: Attribute values are shown up to this many characters.
ATTRIBUTE_CHARS = 500
#: A quicklook maps a variable's time mean when the variable is at most this large, else
#: its first time step.
MEAN_BYTES = 64 * 2**20


@dataclass
class Axes:
    """A variable's dimensions by what they are: x (longitude), y (latitude), time, and the
    others (levels), each drawn at one index."""

    x: str | None = None
    y: str | None = None
    time: str | None = None
    levels: list[str] = field(default_factory=list)

    @property
    def mapped(self) -> bool:
        return self.x is not None and self.y is not None


def _role(ds: Any, dim: str) -> str | None:
    attrs = dict(ds[dim].attrs) if dim in ds.variables else {}
    return coordinate_role(dim, attrs)


def axes_of(ds: Any, variable: Any) -> Axes:
    axes = Axes()
    rest = []
    for dim in map(str, variable.dims):
        role = _role(ds, dim)
        if role == "lon" and axes.x is None:
            axes.x = dim
        elif role == "lat" and axes.y is None:
            axes.y = dim
        elif role == "time" and axes.time is None:
            axes.time = dim
        else:
            rest.append(dim)
    if not axes.mapped and len(rest) >= 2 - (axes.x is not None) - (axes.y is not None):
        # no latitude/longitude coordinate: the last two dimensions, as an image's rows and
        # columns
        if axes.x is None:
            axes.x = rest.pop()
        if axes.y is None and rest:
            axes.y = rest.pop()
    axes.levels = rest
    return axes


def _text(value: Any) -> Any:
    """An attribute's value as JSON says it."""
    import numpy as np

    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str | int | float | bool) or value is None:
        return value[:ATTRIBUTE_CHARS] if isinstance(value, str) else value
    return str(value)[:ATTRIBUTE_CHARS]


def _attrs(attrs: dict[Any, Any]) -> dict[str, Any]:
    return {str(k): _text(v) for k, v in attrs.items()}


def time_text(value: Any) -> str:
    """A time coordinate's value as ISO 8601 (calendars other than the standard one as
    cftime writes them)."""
    import numpy as np

    if isinstance(value, np.datetime64):
        if np.isnat(value):
            return ""
        text = str(np.datetime_as_string(value, unit="s"))
        return text + "Z"
    isoformat = getattr(value, "isoformat", None)
    return str(isoformat()) if callable(isoformat) else str(value)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _chunks(variable: Any) -> tuple[int, ...] | None:
    encoding = variable.encoding
    chunks = encoding.get("chunks") or encoding.get("chunksizes")
    return tuple(int(c) for c in chunks) if chunks else None


def touched_bytes(variable: Any, fixed: set[str]) -> int:
    """The bytes a read of `variable` at one index of each `fixed` dimension (all of the
    others) takes, uncompressed: whole chunks when it is chunked."""
    chunks = _chunks(variable) or tuple(1 for _ in variable.dims)
    contiguous = _chunks(variable) is None
    size = variable.dtype.itemsize
    for dim, length, chunk in zip(map(str, variable.dims), variable.shape, chunks,
                                  strict=False):
        if dim in fixed:
            size *= 1 if contiguous else min(chunk, length)
        else:
            size *= length if contiguous else math.ceil(length / chunk) * chunk
    return int(size)


def describe(ds: Any, fmt: Format) -> dict[str, Any]:
    """What the dataset holds: its dimensions and sizes, attributes, variables (each with
    its dimensions, shape, type, attributes, chunks, size and whether it can be mapped), and
    its time axis's values (a slider's stops)."""
    variables = []
    times: dict[str, Any] = {}
    for name, variable in ds.data_vars.items():
        axes = axes_of(ds, variable)
        if axes.time and axes.time not in times and axes.time in ds.variables:
            values = ds[axes.time].values[:TIME_VALUES]
            times[axes.time] = [time_text(v) for v in values]
        variables.append({
            "name": str(name), "dims": [str(d) for d in variable.dims],
            "shape": [int(s) for s in variable.shape], "dtype": str(variable.dtype),
            "units": _text(variable.attrs.get("units")),
            "long_name": _text(variable.attrs.get("long_name")),
            "standard_name": _text(variable.attrs.get("standard_name")),
            "attrs": _attrs(variable.attrs), "chunks": _chunks(variable),
            "nbytes": int(variable.size * variable.dtype.itemsize),
            "mappable": axes.mapped,
            "axes": {"x": axes.x, "y": axes.y, "time": axes.time, "levels": axes.levels},
        })
    coords = {}
    for name in ds.coords:
        coordinate = ds[name]
        entry: dict[str, Any] = {"dims": [str(d) for d in coordinate.dims],
                                 "size": int(coordinate.size),
                                 "attrs": _attrs(coordinate.attrs)}
        if coordinate.ndim == 1 and coordinate.size and coordinate.dtype.kind in "iuf":
            values = coordinate.values
            entry.update(min=_number(values.min()), max=_number(values.max()))
        coords[str(name)] = entry
    return {"kind": "gridded", "format": fmt.value,
            "dims": {str(k): int(v) for k, v in ds.sizes.items()},
            "attrs": _attrs(ds.attrs), "variables": variables, "coords": coords,
            "times": times}


def _variable(ds: Any, name: str | None) -> Any:
    if name is None:
        drawable = [n for n, v in ds.data_vars.items() if axes_of(ds, v).mapped]
        if not drawable:
            raise ExploreError(422, "No variable of this dataset has two dimensions to map.")
        name = str(drawable[0])
    if name not in ds.data_vars:
        raise ExploreError(400, f"There is no variable {name!r}: the dataset has "
                           f"{', '.join(map(str, ds.data_vars)) or 'none'}.")
    return ds[name]


def _index(value: int | None, length: int, what: str) -> int:
    if value is None:
        return 0
    if not 0 <= value < length:
        raise ExploreError(400, f"{what} {value} is outside 0 to {length - 1}.")
    return value


def _levels(ds: Any, axes: Axes, variable: Any, level: int | None) -> tuple[dict[str, int],
                                                                           dict[str, Any]]:
    """The index of every level dimension (`level` for the first, 0 for the others)."""
    chosen: dict[str, int] = {}
    for n, dim in enumerate(axes.levels):
        length = int(variable.sizes[dim])
        chosen[dim] = _index(level if n == 0 else None, length, f"Level of {dim}")
    first = axes.levels[0] if axes.levels else None
    said = None
    if first is not None:
        value = ds[first].values[chosen[first]] if first in ds.variables else chosen[first]
        said = {"dim": first, "index": chosen[first], "size": int(variable.sizes[first]),
                "value": _text(value), "units": _text(ds[first].attrs.get("units"))
                if first in ds.variables else None}
    return chosen, {"level": said}


def _coordinate(ds: Any, dim: str, length: int) -> Any:
    import numpy as np

    if dim in ds.variables and ds[dim].ndim == 1 and ds[dim].dtype.kind in "iuf":
        return np.asarray(ds[dim].values, dtype="float64")
    return np.arange(length, dtype="float64")


def _edges(values: Any) -> tuple[float, float]:
    """The outer edges of cells centred on `values` (in their order)."""
    if len(values) == 1:
        return float(values[0]) - 0.5, float(values[0]) + 0.5
    first = float(values[0]) - (float(values[1]) - float(values[0])) / 2
    last = float(values[-1]) + (float(values[-1]) - float(values[-2])) / 2
    return first, last


@dataclass
class Field:
    """One map's values, north up and west left, and where they lie."""

    values: Any
    west: float
    east: float
    south: float
    north: float
    time: dict[str, Any] | None
    level: dict[str, Any] | None


def field_at(ds: Any, variable: Any, time: int | None, level: int | None,
             budget: Budget, mean: bool = False) -> Field:
    """The variable at a time index (or its mean over time) and a level index."""
    import numpy as np

    axes = axes_of(ds, variable)
    if not axes.mapped:
        raise ExploreError(422, f"{variable.name} has no two dimensions to map.")
    assert axes.x is not None and axes.y is not None
    chosen, said = _levels(ds, axes, variable, level)
    when = None
    if axes.time:
        length = int(variable.sizes[axes.time])
        if mean:
            when = {"dim": axes.time, "mean": True, "size": length,
                    "first": time_text(ds[axes.time].values[0])
                    if axes.time in ds.variables else "0",
                    "last": time_text(ds[axes.time].values[-1])
                    if axes.time in ds.variables else str(length - 1)}
        else:
            chosen[axes.time] = _index(time, length, "Time index")
            when = {"dim": axes.time, "index": chosen[axes.time], "size": length,
                    "value": time_text(ds[axes.time].values[chosen[axes.time]])
                    if axes.time in ds.variables else str(chosen[axes.time])}
    budget.afford(touched_bytes(variable, set(chosen)), "This map")
    part = variable.isel(chosen)
    if mean and axes.time:
        part = part.mean(dim=axes.time, skipna=True)
    values = np.asarray(part.transpose(axes.y, axes.x).values, dtype="float64")
    xs = _coordinate(ds, axes.x, values.shape[1])
    ys = _coordinate(ds, axes.y, values.shape[0])
    if xs[0] > xs[-1]:  # west on the left
        values, xs = values[:, ::-1], xs[::-1]
    if ys[0] < ys[-1]:  # north at the top
        values, ys = values[::-1, :], ys[::-1]
    west, east = _edges(xs)
    north, south = _edges(ys)
    return Field(values, west, east, south, north, when, said["level"])


def _range(values: Any) -> tuple[float | None, float | None]:
    import numpy as np

    finite = values[np.isfinite(values)]
    if not finite.size:
        return None, None
    return float(finite.min()), float(finite.max())


def map_of(ds: Any, variable_name: str | None, time: int | None, level: int | None,
           budget: Budget) -> dict[str, Any]:
    """A variable's map at a time and level: the picture, its extent, the colour scale's
    range and units (the page draws the axes and the colour bar itself)."""
    variable = _variable(ds, variable_name)
    found = field_at(ds, variable, time, level, budget)
    step = max(1, math.ceil(max(found.values.shape) / MAP_PIXELS))
    low, high = _range(found.values)
    axes = axes_of(ds, variable)
    return {
        "variable": str(variable.name), "units": _text(variable.attrs.get("units")),
        "long_name": _text(variable.attrs.get("long_name")),
        "time": found.time, "level": found.level,
        "extent": {"west": found.west, "east": found.east, "south": found.south,
                   "north": found.north},
        "x": {"dim": axes.x, "units": _text(ds[axes.x].attrs.get("units"))
              if axes.x in ds.variables else None},
        "y": {"dim": axes.y, "units": _text(ds[axes.y].attrs.get("units"))
              if axes.y in ds.variables else None},
        "shape": [int(s) for s in found.values.shape], "step": step,
        "min": low, "max": high,
        "image": data_url(field_png(found.values[::step, ::step], low, high)),
        "colorbar": colorbar_url(), "read_bytes": budget.read,
    }


def _nearest(coordinate: Any, value: float) -> int:
    import numpy as np

    if coordinate.max() > 180 and value < 0:  # longitudes 0..360 asked as -180..180
        value += 360
    return int(np.abs(coordinate - value).argmin())


def series_at(ds: Any, variable_name: str | None, x: float, y: float, level: int | None,
              budget: Budget) -> dict[str, Any]:
    """A variable's values over time at the grid point nearest to (x, y), at a level."""
    variable = _variable(ds, variable_name)
    axes = axes_of(ds, variable)
    if not axes.mapped or axes.time is None:
        raise ExploreError(422, f"{variable.name} has no time and place to draw a series of.")
    assert axes.x is not None and axes.y is not None
    chosen, said = _levels(ds, axes, variable, level)
    xs = _coordinate(ds, axes.x, int(variable.sizes[axes.x]))
    ys = _coordinate(ds, axes.y, int(variable.sizes[axes.y]))
    chosen[axes.x], chosen[axes.y] = _nearest(xs, x), _nearest(ys, y)
    budget.afford(touched_bytes(variable, set(chosen)), "This time series")
    values = variable.isel(chosen).values
    times = ds[axes.time].values if axes.time in ds.variables else range(len(values))
    return {
        "variable": str(variable.name), "units": _text(variable.attrs.get("units")),
        "long_name": _text(variable.attrs.get("long_name")),
        "x": float(xs[chosen[axes.x]]), "y": float(ys[chosen[axes.y]]),
        "index": {axes.x: chosen[axes.x], axes.y: chosen[axes.y]}, "level": said["level"],
        "times": [time_text(t) for t in times], "values": [_number(v) for v in values],
        "read_bytes": budget.read,
    }


def quicklook(ds: Any, variable_name: str | None, title: str, budget: Budget) -> bytes:
    """A variable's map (its time mean when it is small enough, else its first time step),
    with its colour bar and units."""
    variable = _variable(ds, variable_name if variable_name in ds.data_vars else None)
    axes = axes_of(ds, variable)
    mean = axes.time is not None and touched_bytes(variable, set(axes.levels)) <= MEAN_BYTES
    found = field_at(ds, variable, None, None, budget, mean=mean)
    step = max(1, math.ceil(max(found.values.shape) / 400))
    when = found.time or {}
    said = (f"mean {when['first'][:10]} to {when['last'][:10]}" if when.get("mean")
            else str(when.get("value", ""))[:19].replace("T", " "))
    name = str(variable.attrs.get("long_name") or variable.name)
    return quicklook_map(found.values[::step, ::step],
                         (found.west, found.east, found.south, found.north),
                         f"{title}\n{said}".strip(), name, variable.attrs.get("units"),
                         (axes.x or "x", axes.y or "y"))
