"""A job's data in and out against a plain copy: a 100 MB CF NetCDF staged in from a local
S3 server (moto on loopback) and its result stored back, by the worker's own functions
(`staging.stage_in`, `ResultsStore.put`: fetch with the outbound policy, checksum, bounds),
against s3fs, the same S3 client, getting and putting the same bytes. Alternated, each
round on new objects, the median reported with the ratio.

    .venv/bin/python -m tests.bench.staging [--megabytes 100] [--rounds 5]
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from process_api.data.staging import StageLimits, caller_store, stage_in
from tests.support.http import free_port
from tests.support.s3 import s3_client

app = typer.Typer(add_completion=False)


def netcdf_file(path: Path, megabytes: int) -> None:
    """Sea surface temperature, float32, noise (nothing a cache or a codec shortens)."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    steps = max(1, megabytes * 2**20 // (360 * 720 * 4))
    rng = np.random.default_rng(int.from_bytes(os.urandom(4)))
    ds = xr.Dataset(
        {"sst": (("time", "lat", "lon"),
                 (270 + 30 * rng.random((steps, 360, 720))).astype("float32"),
                 {"standard_name": "sea_surface_temperature", "units": "K"})},
        coords={"time": pd.date_range("2021-01-01", periods=steps, freq="D"),
                "lat": np.linspace(-89.75, 89.75, 360), "lon": np.linspace(-179.75, 179.75, 720)})
    ds.to_netcdf(path, engine="h5netcdf")


def run(megabytes: int = 100, rounds: int = 5) -> dict[str, Any]:
    from moto.server import ThreadedMotoServer

    os.environ.setdefault("OUTBOUND_ALLOW", "127.0.0.0/8")  # the store is on loopback
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    s3 = {"accessKeyId": "bench", "secretAccessKey": "bench-secret",
          "endpoint": f"http://127.0.0.1:{port}", "defaultRegion": "us-east-1"}
    store = caller_store("s3://bench/results", s3)
    fs = store.fs
    s3_client(s3["endpoint"]).create_bucket(Bucket="bench")
    times: dict[str, list[float]] = {"plain copy": [], "stage in + out": []}
    try:
        with tempfile.TemporaryDirectory() as folder:
            source = Path(folder) / "sst.nc"
            netcdf_file(source, megabytes)
            size = source.stat().st_size
            for n in range(rounds):
                fs.put_file(str(source), f"bench/in/{n}.nc")
                for which in (("plain copy", "stage in + out") if n % 2 == 0 else
                              ("stage in + out", "plain copy")):
                    local = Path(folder) / f"{which[0]}-{n}"
                    local.mkdir()
                    started = time.perf_counter()
                    if which == "plain copy":
                        fs.get_file(f"bench/in/{n}.nc", str(local / "sst.nc"))
                        fs.put_file(str(local / "sst.nc"), f"bench/plain/{n}/sst.nc")
                    else:
                        staged = stage_in([{"input": "files", "index": None, "files": [
                            {"href": f"s3://bench/in/{n}.nc"}]}], local, s3,
                            StageLimits(), "/inputs")
                        path = local / staged[0]["files"][0]["path"].removeprefix("/inputs/")
                        store.put(path, f"{n}/mean/sst.nc")
                    times[which].append(time.perf_counter() - started)
    finally:
        server.stop()
    medians = {k: statistics.median(v) for k, v in times.items()}
    return {"bytes": size, "rounds": rounds,
            "seconds": {k: round(v, 3) for k, v in medians.items()},
            "MB/s": {k: round(size / 2**20 / v, 1) for k, v in medians.items()},
            "ratio": round(medians["stage in + out"] / medians["plain copy"], 2)}


def table(result: dict[str, Any]) -> str:
    lines = [f"staging {result['bytes'] / 2**20:.0f} MiB NetCDF, median of "
             f"{result['rounds']} rounds (local S3 on loopback)",
             "| path | seconds | MiB/s |", "|---|---|---|"]
    for which, seconds in result["seconds"].items():
        lines.append(f"| {which} | {seconds} | {result['MB/s'][which]} |")
    lines.append(f"stage in + out / plain copy: {result['ratio']}x (target 1.5x or less)")
    return "\n".join(lines)


@app.command()
def main(megabytes: Annotated[int, typer.Option()] = 100,
         rounds: Annotated[int, typer.Option()] = 5) -> None:
    print(table(run(megabytes, rounds)))


if __name__ == "__main__":
    app()
