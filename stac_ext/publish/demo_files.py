"""A small campaign of demo files for `publish-dataset`: a NetCDF, a Zarr store, a Parquet
and a CSV carrying CF metadata as users' files do, plus one unreadable file; and the data
the demo items' assets name (`catalog_data`), so that their Python examples open it. Served
by `geocatalog demo-s3` and used by the tests."""

from __future__ import annotations

import io
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def monthly_sst(year: int, month: int, days: int = 2) -> bytes:
    """Sea surface temperature of one month (`days` time steps), CF-1 NetCDF: the monthly
    files a scientist averages (`sst-monthly`)."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    kelvin = 275.0 + 2 * month + (year - 2020)
    ds = xr.Dataset(
        {"sst": (("time", "lat", "lon"), np.full((days, 3, 4), kelvin, dtype="float32"),
                 {"standard_name": "sea_surface_temperature", "units": "K",
                  "long_name": "Sea surface temperature"})},
        coords={"time": pd.date_range(f"{year}-{month:02d}-01", periods=days, freq="7D"),
                "lat": ("lat", [40.0, 41.0, 42.0], {"units": "degrees_north",
                                                    "standard_name": "latitude"}),
                "lon": ("lon", [-10.0, -9.0, -8.0, -7.0], {"units": "degrees_east",
                                                           "standard_name": "longitude"})},
        attrs={"Conventions": "CF-1.8"})
    return bytes(ds.to_netcdf(engine="h5netcdf"))


def variable_netcdf(standard_name: str, name: str, units: str, value: float = 1.0,
                    day: str = "2024-03-01") -> bytes:
    """One variable of a CF standard name over the Fram Strait on one day, CF-1 NetCDF."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    ds = xr.Dataset(
        {name: (("time", "lat", "lon"), np.full((1, 2, 2), value, dtype="float32"),
                {"standard_name": standard_name, "units": units,
                 "long_name": standard_name.replace("_", " ").capitalize()})},
        coords={"time": pd.to_datetime([day]),
                "lat": ("lat", [78.0, 79.0], {"units": "degrees_north"}),
                "lon": ("lon", [-5.0, 0.0], {"units": "degrees_east"})},
        attrs={"Conventions": "CF-1.8"})
    return bytes(ds.to_netcdf(engine="h5netcdf"))


def sst_monthly(months: tuple[tuple[int, int], ...] = (
        (2021, 1), (2021, 2), (2021, 3), (2022, 1))) -> Iterator[tuple[str, bytes]]:
    """(key, bytes) of monthly sea surface temperature files."""
    for year, month in months:
        yield f"sst-{year}-{month:02d}.nc", monthly_sst(year, month)


def netcdf_bytes() -> bytes:
    """Sea surface temperature over two days (and a variable without standard_name)."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    ds = xr.Dataset(
        {"sst": (("time", "lat", "lon"), np.full((2, 3, 4), 290.0, dtype="float32"),
                 {"standard_name": "sea_surface_temperature", "units": "K",
                  "long_name": "Sea surface temperature"}),
         "flag": (("time", "lat", "lon"), np.zeros((2, 3, 4), dtype="int8"))},
        coords={"time": pd.to_datetime(["2023-06-01", "2023-06-02"]),
                "lat": ("lat", [40.0, 41.0, 42.0], {"units": "degrees_north"}),
                "lon": ("lon", [-10.0, -9.0, -8.0, -7.0], {"units": "degrees_east"})})
    return bytes(ds.to_netcdf(engine="h5netcdf"))


def zarr_files() -> Iterator[tuple[str, bytes]]:
    """(path inside the store, bytes) of an eastward-wind Zarr store."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    ds = xr.Dataset(
        {"uas": (("time", "latitude", "longitude"), np.ones((1, 2, 2), dtype="float32"),
                 {"standard_name": "eastward_wind", "units": "m s-1"})},
        coords={"time": pd.to_datetime(["2023-07-01"]),
                "latitude": [50.0, 51.0], "longitude": [2.0, 3.0]})
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "wind.zarr"
        ds.to_zarr(store, consolidated=True, zarr_format=2)
        for path in sorted(store.rglob("*")):
            if path.is_file():
                yield str(path.relative_to(store)), path.read_bytes()


def parquet_bytes() -> bytes:
    """Air temperature at two stations, CF metadata on the fields."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([
        pa.field("lat", pa.float64(), metadata={"standard_name": "latitude"}),
        pa.field("lon", pa.float64(), metadata={"standard_name": "longitude"}),
        pa.field("time", pa.timestamp("s", tz="UTC")),
        pa.field("temp", pa.float32(), metadata={"standard_name": "air_temperature",
                                                  "units": "K"}),
    ])
    table = pa.table({"lat": [45.0, 46.5], "lon": [5.0, 6.0],
                      "time": pd.to_datetime(["2023-01-01", "2023-01-03"], utc=True),
                      "temp": [280.0, 281.0]}, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer, row_group_size=1)
    return buffer.getvalue()


def campaign() -> Iterator[tuple[str, bytes]]:
    """(key under the prefix, bytes) of every demo file."""
    yield "sst.nc", netcdf_bytes()
    for path, data in zarr_files():
        yield f"wind.zarr/{path}", data
    yield "stations.parquet", parquet_bytes()
    yield "readings.csv", b"a,b\n1,2\n"
    yield "broken.nc", b"this is not netcdf"


#: Each demo variable's units, typical value, its change from the equator to the poles
#: (per degree of latitude) and its seasonal swing.
_DEMO_VARIABLES = {
    "sea_surface_temperature": ("K", 300.0, -0.25, 3.0),
    "air_temperature": ("K", 298.0, -0.4, 6.0),
    "precipitation_flux": ("kg m-2 s-1", 3e-5, -2e-7, 1e-5),
    "sea_water_salinity": ("1e-3", 36.0, -0.02, 0.3),
}


def _gridded(variable: str, bbox: list[float], year: int) -> Any:
    """A year of monthly means of `variable` (a CF standard name) on a 9 x 12 grid over
    `bbox`, smooth in space and time: what a demo item's data holds."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    west, south, east, north = bbox
    units, typical, per_degree, swing = _DEMO_VARIABLES.get(variable, ("1", 1.0, 0.0, 0.1))
    rng = np.random.default_rng(zlib.crc32(f"{variable} {year} {bbox}".encode()))
    lat, lon = np.linspace(south, north, 9), np.linspace(west, east, 12)
    months = np.arange(12)
    values = (typical + per_degree * np.abs(lat)[None, :, None]
              + swing * np.sin(2 * np.pi * (months - 3) / 12)[:, None, None]
              * np.sign(lat.mean() or 1)
              + 0.1 * abs(swing) * np.cos(np.radians(lon))[None, None, :]
              + 0.05 * abs(swing) * rng.standard_normal((12, 9, 12))).astype("float32")
    return xr.Dataset(
        {variable: (("time", "lat", "lon"), values,
                    {"standard_name": variable, "long_name": variable.replace("_", " "),
                     "units": units})},
        coords={"time": pd.date_range(f"{year}-01-01", periods=12, freq="MS"),
                "lat": ("lat", lat, {"units": "degrees_north", "standard_name": "latitude"}),
                "lon": ("lon", lon, {"units": "degrees_east", "standard_name": "longitude"})},
        attrs={"Conventions": "CF-1.8"})


def _stations(variable: str, bbox: list[float], year: int) -> Any:
    """Monthly readings of `variable` at three stations inside `bbox` (a table)."""
    import pandas as pd

    west, south, east, north = bbox
    grid = _gridded(variable, bbox, year)[variable]
    rows = []
    for name, fx, fy in (("a", 0.2, 0.3), ("b", 0.5, 0.7), ("c", 0.8, 0.4)):
        lon, lat = west + fx * (east - west), south + fy * (north - south)
        near = grid.sel(lon=lon, lat=lat, method="nearest")
        for time, value in zip(grid["time"].values, near.values, strict=True):
            rows.append({"station": name, "lat": round(lat, 3), "lon": round(lon, 3),
                         "time": pd.Timestamp(time).tz_localize("UTC"),
                         variable: float(value)})
    return pd.DataFrame(rows)


def catalog_data(items: Iterator[dict[str, Any]], bucket: str
                 ) -> Iterator[tuple[str, bytes]]:
    """(key, bytes) of the data the demo items' assets name in `bucket`: each NetCDF or
    Zarr store a year of the item's variable over its bbox, each CSV its stations, each
    Parquet file its stations' monthly readings."""
    for item in items:
        variable = str(item["collection"]).partition("-")[2]
        year = int(str(item["properties"]["datetime"])[:4])
        for asset in item["assets"].values():
            scheme, _, path = str(asset["href"]).partition("://")
            found, _, key = path.partition("/")
            if scheme != "s3" or found != bucket:
                continue
            if key.endswith(".nc"):
                yield key, bytes(_gridded(variable, item["bbox"], year).to_netcdf(
                    engine="h5netcdf"))
            elif key.endswith(".zarr"):
                with tempfile.TemporaryDirectory() as folder:
                    store = Path(folder) / "data.zarr"
                    _gridded(variable, item["bbox"], year).to_zarr(
                        store, consolidated=True, zarr_format=2)
                    for file in sorted(store.rglob("*")):
                        if file.is_file():
                            yield f"{key}/{file.relative_to(store)}", file.read_bytes()
            elif key.endswith(".csv"):
                west, south, east, north = item["bbox"]
                yield key, (f"station,lat,lon,{variable}\n"
                            f"a,{south + 1},{west + 1},290.5\n"
                            f"b,{north - 1},{east - 1},288.0\n").encode()
            elif key.endswith(".parquet"):
                buffer = io.BytesIO()
                _stations(variable, item["bbox"], year).to_parquet(buffer, index=False,
                                                                   row_group_size=12)
                yield key, buffer.getvalue()
