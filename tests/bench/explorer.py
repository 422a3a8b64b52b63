"""The data explorer on large data, on the demo S3 (`geocatalog demo-s3`, moto, on
loopback): the bench writes there a 1 GB Zarr variable chunked by time, ten years of daily
values chunked for series, and a Parquet file of ten million rows, then times what the
explorer's page asks, over HTTP to a real uvicorn, as an item's assets:

- the first map: the page opened on the 1 GB store (its `info`, then its first `map`), on
  a server started anew each round (no dataset kept open from an earlier one), each round
  another time step; target 1 s;
- a time series at a clicked point over the ten years (the page has opened the store),
  each round another point; target 2 s;
- the Parquet file's schema, row count and first page (`info`, then `rows`); target 1 s.

Medians and maxima of the rounds, with the bytes each read.

    .venv/bin/python -m tests.bench.explorer [--rounds 10]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from tests.bench import servers
from tests.support.http import free_port

app = typer.Typer(add_completion=False)
#: Where the bench writes, in the demo bucket (the demo S3 keeps it in memory: each run
#: writes it again).
PREFIX = "bench"
MAP = f"s3://demo/{PREFIX}/sst-hourly-1gb.zarr"
SERIES = f"s3://demo/{PREFIX}/sst-daily-10y.zarr"
TABLE = f"s3://demo/{PREFIX}/readings-10m.parquet"
#: 1,000 steps of a 0.5-degree global grid, float32: 1.04 GB, one chunk per step.
MAP_SHAPE, MAP_CHUNKS = (1000, 360, 720), (1, 360, 720)
#: Ten years of days on a 1-degree grid of Europe and its seas, chunked for series.
SERIES_SHAPE, SERIES_CHUNKS = (3653, 90, 120), (3653, 15, 15)
ROWS, ROW_GROUP = 10_000_000, 1_048_576  # pyarrow's default row group
TARGETS = {"first map": 1.0, "time series": 2.0, "parquet schema, count, first page": 1.0}


@contextmanager
def demo_s3() -> Iterator[dict[str, str]]:
    """`geocatalog demo-s3` on a free port, once it holds the demo files; the service's
    access to it (any key)."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "stac_ext.cli", "demo-s3", "--port",
                                str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    last = "sst-monthly/sst-2022-01.nc"
    try:
        for _ in range(1200):
            try:
                listing = httpx.get(f"{endpoint}/demo?list-type=2&prefix={last}").text
                if f"<Key>{last}</Key>" in listing:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        yield {"endpoint": endpoint, "accessKeyId": "bench", "secretAccessKey": "bench",
               "defaultRegion": "us-east-1"}
    finally:
        process.terminate()
        process.wait(30)


def _filesystem(access: dict[str, str], asynchronous: bool = False) -> Any:
    import s3fs

    return s3fs.S3FileSystem(key=access["accessKeyId"], secret=access["secretAccessKey"],
                             client_kwargs={"endpoint_url": access["endpoint"]},
                             asynchronous=asynchronous, skip_instance_cache=True)


def _grid(path: str, access: dict[str, str], shape: tuple[int, int, int],
          chunks: tuple[int, int, int], start: str, freq: str, block: int) -> None:
    """Sea surface temperature on a regular grid (a smooth field, a season, noise), written
    a block of time steps at a time with zarr, as xarray reads it (CF attributes,
    consolidated metadata)."""
    import numpy as np
    import pandas as pd
    import zarr
    from zarr.storage import FsspecStore

    steps, ny, nx = shape
    store = FsspecStore(_filesystem(access, asynchronous=True), path=path.removeprefix(
        "s3://"))
    group = zarr.open_group(store, mode="w", zarr_format=2)
    lat = np.linspace(-89.75, 89.75, ny) if ny == 360 else np.linspace(30.5, 74.5, ny)
    lon = np.linspace(-179.75, 179.75, nx) if nx == 720 else np.linspace(-29.5, 89.5, nx)
    times = pd.date_range(start, periods=steps, freq=freq)
    for name, values, attrs in (
            ("lat", lat, {"units": "degrees_north", "standard_name": "latitude"}),
            ("lon", lon, {"units": "degrees_east", "standard_name": "longitude"})):
        array = group.create_array(name, shape=values.shape, dtype="float64")
        array[:] = values
        array.attrs.update({**attrs, "_ARRAY_DIMENSIONS": [name]})
    hours = ((times - times[0]) / pd.Timedelta("1h")).to_numpy().astype("int64")
    array = group.create_array("time", shape=hours.shape, dtype="int64")
    array[:] = hours
    array.attrs.update({"units": f"hours since {times[0]:%Y-%m-%d %H:%M:%S}",
                        "calendar": "proleptic_gregorian", "standard_name": "time",
                        "_ARRAY_DIMENSIONS": ["time"]})
    sst = group.create_array("sst", shape=shape, chunks=chunks, dtype="float32",
                             fill_value=float("nan"))
    sst.attrs.update({"units": "K", "standard_name": "sea_surface_temperature",
                      "long_name": "Sea surface temperature",
                      "_ARRAY_DIMENSIONS": ["time", "lat", "lon"]})
    rng = np.random.default_rng(1)
    base = (300 - 30 * np.abs(lat) / 90)[:, None] + np.zeros((1, nx))
    for first in range(0, steps, block):
        n = min(block, steps - first)
        day = np.arange(first, first + n)[:, None, None]
        season = 3 * np.sin(2 * np.pi * day / (365.25 * (24 if freq == "h" else 1)))
        sst[first:first + n] = (base[None] + season + rng.standard_normal((n, ny, nx))
                                ).astype("float32")
    zarr.consolidate_metadata(store)


def _table(path: str, access: dict[str, str]) -> None:
    """Readings of 500 stations: time, place, temperature, salinity; pyarrow's defaults."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(2)
    schema = pa.schema([("time", pa.timestamp("s", tz="UTC")), ("station", pa.string()),
                        ("lat", pa.float64()), ("lon", pa.float64()),
                        ("temperature", pa.float32()), ("salinity", pa.float32())])
    stations = [f"st-{n:03d}" for n in range(500)]
    places = rng.random((500, 2)) * [40, 60] + [30, -20]
    start = np.datetime64("2015-01-01T00:00:00")
    with _filesystem(access).open(path.removeprefix("s3://"), "wb") as out, \
            pq.ParquetWriter(out, schema) as writer:
        for first in range(0, ROWS, ROW_GROUP):
            n = min(ROW_GROUP, ROWS - first)
            which = np.arange(first, first + n) % 500
            writer.write_table(pa.table({
                "time": start + (np.arange(first, first + n) // 500).astype("timedelta64[h]"),
                "station": pa.array([stations[w] for w in which]),
                "lat": places[which, 0], "lon": places[which, 1],
                "temperature": (285 + 5 * rng.standard_normal(n)).astype("float32"),
                "salinity": (35 + rng.standard_normal(n)).astype("float32")}, schema=schema),
                row_group_size=ROW_GROUP)


def generate(access: dict[str, str]) -> None:
    """The three files on the demo S3."""
    started = time.monotonic()
    _grid(MAP, access, MAP_SHAPE, MAP_CHUNKS, "2021-01-01", "h", 50)
    _grid(SERIES, access, SERIES_SHAPE, SERIES_CHUNKS, "2014-01-01", "D", 3653)
    _table(TABLE, access)
    print(f"explorer data written to the demo S3 in {time.monotonic() - started:.0f} s",
          flush=True)


def _item(item_id: str) -> dict[str, Any]:
    return {"type": "Feature", "stac_version": "1.0.0", "id": item_id,
            "geometry": {"type": "Polygon", "coordinates": [[[-180, -90], [180, -90],
                                                             [180, 90], [-180, 90],
                                                             [-180, -90]]]},
            "properties": {"datetime": "2021-01-01T00:00:00Z", "title": "Explorer bench"},
            "assets": {name: {"href": href, "roles": ["data"], "title": name}
                       for name, href in (("map", MAP), ("series", SERIES), ("table", TABLE))}}


def _timed(client: httpx.Client, requests: list[tuple[str, dict[str, Any]]]
           ) -> tuple[float, int]:
    """Seconds for the requests one after the other (as the page sends them), and the bytes
    of the data they read."""
    started = time.perf_counter()
    read = 0
    for path, params in requests:
        answer = client.get(path, params=params)
        answer.raise_for_status()
        read += int(answer.json().get("read_bytes") or 0)
    return time.perf_counter() - started, read


def _round(client: httpx.Client, views: str, n: int) -> dict[str, tuple[float, int]]:
    """One round on a server just started: its explorer's libraries loaded first (xarray,
    zarr, matplotlib, DuckDB: seconds, once per process) on the series' store, then each
    scenario as the page asks it."""
    _timed(client, [(views + "info", {"source": SERIES}),
                    (views + "map", {"source": SERIES, "variable": "sst"}),
                    (views + "rows", {"source": TABLE, "limit": 1, "columns": "lat"})])
    step = (n * 97 + 13) % MAP_SHAPE[0]
    x, y = -29.5 + (n * 37 % 120), 30.5 + (n * 23 % 90)
    return {
        # the page opened on the 1 GB store: what it holds, then its first map
        "first map": _timed(client, [
            (views + "info", {"source": MAP}),
            (views + "map", {"source": MAP, "variable": "sst", "time": step})]),
        # a click on the map of the ten years (the page has opened the store)
        "time series": _timed(client, [
            (views + "series", {"source": SERIES, "variable": "sst", "x": x, "y": y})]),
        "parquet schema, count, first page": _timed(client, [
            (views + "info", {"source": TABLE}),
            (views + "rows", {"source": TABLE, "offset": 0, "limit": 50})])}


def measure(server: servers.Server, port: int, token: str, admin: str, rounds: int
            ) -> dict[str, Any]:
    """The three scenarios, each round on a server started anew (no dataset kept open from
    an earlier round: each map is the first of its store)."""
    # a collection of a CF standard name (the vocabulary governs collection ids)
    collection = "climate_forecast-sea_surface_temperature"
    item_id = f"explorer-bench-{uuid.uuid4().hex[:6]}"
    views = f"/collections/{collection}/items/{item_id}/explore/"
    found: dict[str, list[tuple[float, int]]] = {name: [] for name in TARGETS}
    with servers.serving(server, port) as running, httpx.Client(
            base_url=running.url, timeout=300) as client:
        r = client.post("/collections", headers={"Authorization": f"Bearer {admin}"}, json={
            "type": "Collection", "stac_version": "1.0.0", "id": collection,
            "description": "explorer bench", "license": "other",
            "extent": {"spatial": {"bbox": [[-180, -90, 180, 90]]},
                       "temporal": {"interval": [[None, None]]}}, "links": []})
        made = r.status_code == 201
        if r.status_code != 409:  # there already: kept as it is
            r.raise_for_status()
        r = client.post(f"/collections/{collection}/items", json=_item(item_id),
                        headers={"Authorization": f"Bearer {token}"})
        r.raise_for_status()
        # a process's very first explorer request, its libraries loaded with it
        cold, _ = _timed(client, [(views + "info", {"source": MAP})])
    try:
        for n in range(rounds):
            with servers.serving(server, port) as running, httpx.Client(
                    base_url=running.url, timeout=300) as client:
                for name, figures in _round(client, views, n).items():
                    found[name].append(figures)
    finally:
        with servers.serving(server, port) as running, httpx.Client(
                base_url=running.url, timeout=300) as client:
            client.delete(f"/collections/{collection}/items/{item_id}",
                          headers={"Authorization": f"Bearer {token}"})
            if made:
                client.delete(f"/collections/{collection}",
                              headers={"Authorization": f"Bearer {admin}"})
    return {"rounds": rounds, "first_request_s": round(cold, 3), "scenarios": {
        name: {"median_s": round(statistics.median(s for s, _ in times), 3),
               "max_s": round(max(s for s, _ in times), 3),
               "read_mib": round(statistics.median(b for _, b in times) / 2**20, 1),
               "target_s": TARGETS[name]}
        for name, times in found.items()},
        "data": {"map": f"{MAP}: float32 {MAP_SHAPE}, chunks {MAP_CHUNKS}",
                 "series": f"{SERIES}: float32 {SERIES_SHAPE}, chunks {SERIES_CHUNKS}",
                 "table": f"{TABLE}: {ROWS:,} rows, row groups of {ROW_GROUP:,}"}}


def run(dsn: str, data_dir: Path, port: int, admin: str, token: str,
        rounds: int = 10) -> dict[str, Any]:
    """The data on the demo S3, a server reading it, the scenarios."""
    with demo_s3() as access:
        generate(access)
        server = servers.geocatalog("geocatalog-explorer", dsn, data_dir,
                                    ASSETS_S3=json.dumps(access), OUTBOUND_ALLOW="127.0.0.0/8")
        return measure(server, port, token, admin, rounds)


def table(result: dict[str, Any]) -> str:
    lines = [f"the data explorer on the demo S3 (moto, loopback), {result['rounds']} rounds "
             f"each, over HTTP (a process's first explorer request: "
             f"{result['first_request_s']} s)",
             "| scenario | median s | max s | data read (MiB) | target s |",
             "|---|---|---|---|---|"]
    for name, found in result["scenarios"].items():
        lines.append(f"| {name} | {found['median_s']} | {found['max_s']} | "
                     f"{found['read_mib']} | {found['target_s']} |")
    lines += [f"- {line}" for line in result["data"].values()]
    return "\n".join(lines)


@app.command()
def main(rounds: Annotated[int, typer.Option(help="rounds of each scenario")] = 10,
         data_dir: Annotated[Path, typer.Option(help="its own cluster")] = Path(
             ".bench/explorer"),
         pg_port: Annotated[int, typer.Option(help="its cluster's port")] = 5451) -> None:
    """The explorer's scenarios alone, on a cluster of their own (`make bench` runs them
    among its features, on its own)."""
    from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
    from stac_ext.platform.database.cluster import Cluster
    from stac_ext.platform.database.migrations import migrate

    data_dir = data_dir.resolve()
    cluster = Cluster(datadir=data_dir / "pg", port=pg_port)
    cluster.start()
    migrate(cluster.dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    settings, issuer = servers.local_issuer(cluster.dsn, data_dir)
    admin = issuer.mint("bench-admin", settings.data_client_id, [], [settings.admin_right],
                        3600)
    token = servers.writer_token(settings, issuer)
    print(table(run(cluster.dsn, data_dir, free_port(), admin, token, rounds)))


if __name__ == "__main__":
    app()
