"""`geocatalog thumbnails`, as an operator runs it on a catalog published before quicklooks:
each item whose data can be drawn gets its `thumbnail` asset, its picture drawn and kept in
the results store; a job's file is drawn when first viewed; data that cannot be read is
said, and its item left as it was. Run again, it does nothing more."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import psycopg
import pytest
import xarray as xr

from stac_ext.settings import Settings
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.http import free_port
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import make_collection, make_item, unique

COLLECTION = "test_conv-quicklooks"
JOB = "0b0e6f36-2b7b-4a7e-9a55-7c5d9f6f1b6c"


def thumbnail_of(url: str, item_id: str) -> dict | None:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT content->'assets'->'thumbnail' FROM pgstac.items "
                           "WHERE id = %s", (item_id,)).fetchone()
    assert row is not None
    return row[0]


@pytest.mark.slow
def test_thumbnails_for_items_published_before(settings: Settings, s3_endpoint: str,
                                               tmp_path: Path) -> None:
    bucket = unique("quicklooks-")
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    grid = xr.Dataset({"t": (("time", "lat", "lon"), np.arange(24, dtype="float32")
                             .reshape(2, 3, 4), {"units": "K"})},
                      coords={"time": pd.date_range("2021-01-01", periods=2),
                              "lat": [1.0, 2.0, 3.0], "lon": [1.0, 2.0, 3.0, 4.0]})
    grid.to_zarr(tmp_path / "g.zarr", consolidated=True, zarr_format=2)
    for path in sorted((tmp_path / "g.zarr").rglob("*")):
        if path.is_file():
            s3.put_object(Bucket=bucket, Key=f"g.zarr/{path.relative_to(tmp_path / 'g.zarr')}",
                          Body=path.read_bytes())
    port = free_port()
    ids = {name: unique(f"{name}-") for name in ("drawn", "job", "unreadable", "tif", "had")}
    items = [
        make_item(ids["drawn"], data=f"s3://{bucket}/g.zarr"),
        make_item(ids["job"], data=f"http://127.0.0.1:{port}/processes/jobs/{JOB}/files/m/m.nc"),
        make_item(ids["unreadable"], data=f"s3://{bucket}/missing.zarr"),
        make_item(ids["tif"], data="https://example.org/a.tif"),
        make_item(ids["had"], data=f"s3://{bucket}/g.zarr"),
    ]
    items[-1]["assets"]["thumbnail"] = {"href": "https://example.org/own.png",
                                        "type": "image/png", "roles": ["thumbnail"]}
    for item in items:
        item["collection"] = COLLECTION
    (tmp_path / "collection.json").write_text(json.dumps(make_collection(COLLECTION)))
    (tmp_path / "items.ndjson").write_text("\n".join(json.dumps(i) for i in items))
    url = new_database(settings.database_url or "", "quicklooks_")
    data_dir = tmp_path / "data"
    env = {"DATABASE_URL": url, "GEOCATALOG_DATA_DIR": str(data_dir),
           "GEOCATALOG_PORT": str(port), "ASSETS_S3": json.dumps({
               "endpoint": s3_endpoint, "accessKeyId": KEY_ID, "secretAccessKey": SECRET})}
    for command in (["migrate"], ["load", str(tmp_path / "collection.json")],
                    ["load", str(tmp_path / "items.ndjson")]):
        assert run_cli(*command, env=env).returncode == 0, command

    done = run_cli("thumbnails", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("quicklooks: 1 drawn, 1 to draw when first viewed, 1 not "
                                   "drawn (their data could not be read)")
    assert done.stderr.strip() == (
        f"{COLLECTION}/{ids['unreadable']}: not drawn: s3://{bucket}/missing.zarr does not "
        "exist.")
    api = f"http://127.0.0.1:{port}/data/collections/{COLLECTION}/items"
    for name in ("drawn", "job"):
        assert thumbnail_of(url, ids[name]) == {
            "href": f"{api}/{ids[name]}/thumbnail.png", "type": "image/png",
            "title": "Quicklook", "roles": ["thumbnail"]}
    assert thumbnail_of(url, ids["unreadable"]) is None
    assert thumbnail_of(url, ids["tif"]) is None
    assert thumbnail_of(url, ids["had"])["href"] == "https://example.org/own.png"
    [kept] = (data_dir / "results" / "thumbnails" / COLLECTION / ids["drawn"]).glob("*.png")
    assert kept.read_bytes()[:4] == b"\x89PNG" and kept.name.endswith("-all.png")

    again = run_cli("thumbnails", "--collection", COLLECTION, env=env)
    assert again.stdout.strip() == ("quicklooks: 0 drawn, 0 to draw when first viewed, 1 not "
                                    "drawn (their data could not be read)")
