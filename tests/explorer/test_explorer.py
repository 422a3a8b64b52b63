"""The data explorer's views over HTTP, against a real S3 server holding real files, compared
with what xarray, pandas and pyarrow read of the same files: a Zarr's and a NetCDF's
description, maps and time series; a Parquet's and a CSV's schema, count, pages, chart and
points. Reads are bounded; a hidden item is a missing one, byte for byte; keys stay on the
server."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import xarray as xr

from stac_ext.settings import Settings
from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT, TestIssuer
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import make_collection, make_item, unique

SST = unique("test_conv-explored_")


def grid() -> xr.Dataset:
    """20 days of a 10 x 15 grid, one cell missing, chunked by time when written."""
    rng = np.random.default_rng(7)
    values = (285 + 10 * rng.random((20, 10, 15))).astype("float32")
    values[3, 2, 4] = np.nan
    return xr.Dataset(
        {"sst": (("time", "lat", "lon"), values,
                 {"units": "K", "long_name": "Sea surface temperature",
                  "standard_name": "sea_surface_temperature"})},
        coords={"time": pd.date_range("2021-01-01", periods=20, freq="D"),
                "lat": ("lat", np.linspace(40, 49, 10), {"units": "degrees_north"}),
                "lon": ("lon", np.linspace(-10, 4, 15), {"units": "degrees_east"})},
        attrs={"Conventions": "CF-1.8", "title": "A test grid"})


def levels() -> xr.Dataset:
    """A NetCDF's variable with a depth: time, depth, lat, lon (lat descending)."""
    rng = np.random.default_rng(8)
    return xr.Dataset(
        {"temp": (("time", "depth", "lat", "lon"),
                  (270 + 20 * rng.random((5, 3, 6, 8))).astype("float64"),
                  {"units": "K"})},
        coords={"time": pd.date_range("2022-03-01", periods=5, freq="MS"),
                "depth": ("depth", [0.0, 10.0, 50.0], {"units": "m"}),
                "lat": ("lat", np.linspace(60, 50, 6), {"units": "degrees_north"}),
                "lon": ("lon", np.linspace(0, 7, 8), {"units": "degrees_east"})})


ROWS = 60_000


def table() -> pd.DataFrame:
    rng = np.random.default_rng(9)
    return pd.DataFrame({
        "time": pd.date_range("2020-01-01", periods=ROWS, freq="h", tz="UTC"),
        "lat": 40 + 5 * rng.random(ROWS), "lon": -5 + 5 * rng.random(ROWS),
        "salinity": 35 + rng.random(ROWS), "station": [f"s{n % 7}" for n in range(ROWS)]})


CSV = "station,lat,lon,air_temperature\na,41.5,-3.25,290.5\nb,44.0,2.0,288.0\nc,43.0,0.5,289.25\n"


@pytest.fixture(scope="module")
def bucket(s3_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The files, in a bucket of the tests' S3 server."""
    s3 = s3_client(s3_endpoint)
    name = unique("explore-")
    s3.create_bucket(Bucket=name)
    folder = tmp_path_factory.mktemp("explore")
    grid().to_zarr(folder / "grid.zarr", consolidated=True, zarr_format=2,
                   encoding={"sst": {"chunks": (1, 10, 15)}})
    for path in sorted((folder / "grid.zarr").rglob("*")):
        if path.is_file():
            s3.put_object(Bucket=name, Key=f"grid.zarr/{path.relative_to(folder / 'grid.zarr')}",
                          Body=path.read_bytes())
    s3.put_object(Bucket=name, Key="levels.nc", Body=bytes(levels().to_netcdf(
        engine="h5netcdf")))
    buffer = io.BytesIO()
    table().to_parquet(buffer, index=False, row_group_size=10_000)
    s3.put_object(Bucket=name, Key="table.parquet", Body=buffer.getvalue())
    s3.put_object(Bucket=name, Key="readings.csv", Body=CSV.encode())
    return name


@pytest.fixture(scope="module")
def explorer_settings(settings: Settings, s3_endpoint: str) -> dict[str, Any]:
    """The explorer's settings over the session's: the test S3's keys, no outside explorer."""
    return {"assets_s3": {"endpoint": s3_endpoint, "accessKeyId": KEY_ID,
                          "secretAccessKey": SECRET, "defaultRegion": "us-east-1"},
            "explorer_url_template": None}


@pytest.fixture(scope="module")
async def explorer_app(service_app, explorer_settings: dict[str, Any]
                       ) -> AsyncIterator:
    async with service_app(**explorer_settings) as service:
        yield service.app


@pytest.fixture
async def alice(explorer_app, issuer: TestIssuer) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(explorer_app, issuer.token("alice")) as c:
        yield c


@pytest.fixture
async def bob(explorer_app, issuer: TestIssuer) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(explorer_app, issuer.token("bob")) as c:
        yield c


@pytest.fixture
async def anyone(explorer_app) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(explorer_app) as c:
        yield c


def hrefs(bucket: str) -> dict[str, str]:
    return {"grid": f"s3://{bucket}/grid.zarr", "levels": f"s3://{bucket}/levels.nc",
            "table": f"s3://{bucket}/table.parquet", "readings": f"s3://{bucket}/readings.csv"}


@pytest.fixture(scope="module")
async def item_ids(explorer_app, issuer: TestIssuer) -> dict[str, str]:
    """The ids of alice's items, in a collection of their own."""
    async with http_client(explorer_app, issuer.token("root", rights=[ADMIN_RIGHT])) as admin:
        r = await admin.post("/data/collections", json=make_collection(SST))
        assert r.status_code == 201, r.text
    return {"public": unique("explored-"), "private": unique("explored-private-")}


@pytest.fixture
async def items(alice: httpx.AsyncClient, bucket: str, item_ids: dict[str, str]
                ) -> dict[str, str]:
    """alice's public item with the four files, and her private one with the grid."""
    for key, visibility in (("public", "public"), ("private", "private")):
        if (await alice.get(f"/data/collections/{SST}/items/{item_ids[key]}")).status_code \
                == 200:
            continue
        item = make_item(item_ids[key], **(hrefs(bucket) if key == "public" else
                                           {"grid": hrefs(bucket)["grid"]}))
        item["properties"].update(visibility=visibility, title=f"Explored {key}")
        r = await alice.post(f"/data/collections/{SST}/items", json=item)
        assert r.status_code == 201, r.text
    return item_ids


def view(item_id: str, name: str) -> str:
    return f"/data/collections/{SST}/items/{item_id}/explore/{name}"


async def test_a_zarr_is_described_as_xarray_reads_it(alice, items, bucket) -> None:
    r = await alice.get(view(items["public"], "info"), params={"source": hrefs(bucket)["grid"]})
    assert r.status_code == 200, r.text
    info = r.json()
    expected = grid()
    assert (info["kind"], info["format"], info["dims"]) == (
        "gridded", "zarr", {"time": 20, "lat": 10, "lon": 15})
    [sst] = info["variables"]
    assert (sst["name"], sst["dims"], sst["shape"], sst["units"], sst["chunks"],
            sst["mappable"], sst["nbytes"]) == (
        "sst", ["time", "lat", "lon"], [20, 10, 15], "K", [1, 10, 15], True,
        expected["sst"].nbytes)
    assert sst["axes"] == {"x": "lon", "y": "lat", "time": "time", "levels": []}
    assert info["attrs"] == {"Conventions": "CF-1.8", "title": "A test grid"}
    assert info["times"]["time"] == [f"{t}T00:00:00Z" for t in
                                     pd.date_range("2021-01-01", periods=20).strftime("%Y-%m-%d")]
    assert (info["coords"]["lat"]["min"], info["coords"]["lat"]["max"]) == (40.0, 49.0)
    assert r.headers["cache-control"] == "private, no-store"


def png_pixels(data_url: str) -> np.ndarray:
    from PIL import Image

    header, _, encoded = data_url.partition(",")
    assert header == "data:image/png;base64"
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(encoded))))


async def test_a_map_is_one_time_step_read_chunk_wise(alice, items, bucket) -> None:
    expected = grid()["sst"]
    for time in (0, 3, 19):
        r = await alice.get(view(items["public"], "map"), params={
            "source": hrefs(bucket)["grid"], "variable": "sst", "time": time})
        assert r.status_code == 200, r.text
        found = r.json()
        step = expected.isel(time=time).values
        assert (found["min"], found["max"]) == (float(np.nanmin(step)), float(np.nanmax(step)))
        assert found["time"] == {"dim": "time", "index": time, "size": 20,
                                 "value": f"2021-01-{time + 1:02d}T00:00:00Z"}
        assert (found["variable"], found["units"], found["long_name"]) == (
            "sst", "K", "Sea surface temperature")
        # cells 1 degree apart: the edges half a cell beyond the first and last centres
        assert found["extent"] == {"west": -10.5, "east": 4.5, "south": 39.5, "north": 49.5}
        pixels = png_pixels(found["image"])
        assert pixels.shape == (10, 15, 4)
        # north up: the picture's first row is the last latitude; a missing value clear
        assert (pixels[..., 3] == 0).sum() == (1 if time == 3 else 0)
        if time == 3:
            assert pixels[10 - 1 - 2, 4, 3] == 0
        # one chunk of the variable (600 bytes before compression), its coordinates and the
        # store's metadata: never the whole 12 kB array
        assert found["read_bytes"] < 6000, found["read_bytes"]


async def test_a_time_series_at_a_point_is_xarrays(alice, items, bucket) -> None:
    expected = grid()["sst"]
    r = await alice.get(view(items["public"], "series"), params={
        "source": hrefs(bucket)["grid"], "variable": "sst", "x": -3.2, "y": 44.4})
    assert r.status_code == 200, r.text
    found = r.json()
    point = expected.sel(lon=-3.2, lat=44.4, method="nearest")
    assert (found["x"], found["y"]) == (float(point["lon"]), float(point["lat"])) == (-3.0, 44.0)
    assert found["values"] == [None if np.isnan(v) else float(v) for v in point.values]
    assert found["times"][0] == "2021-01-01T00:00:00Z" and len(found["times"]) == 20


async def test_a_netcdf_at_a_level(alice, items, bucket) -> None:
    expected = levels()["temp"]
    source = hrefs(bucket)["levels"]
    info = (await alice.get(view(items["public"], "info"), params={"source": source})).json()
    [temp] = info["variables"]
    assert (temp["axes"], temp["chunks"]) == (
        {"x": "lon", "y": "lat", "time": "time", "levels": ["depth"]}, None)
    r = await alice.get(view(items["public"], "map"), params={
        "source": source, "time": 2, "level": 1})
    found = r.json()
    part = expected.isel(time=2, depth=1).values
    assert (found["min"], found["max"]) == (float(part.min()), float(part.max()))
    assert found["level"] == {"dim": "depth", "index": 1, "size": 3, "value": 10.0,
                              "units": "m"}
    assert found["extent"]["north"] > found["extent"]["south"]
    r = await alice.get(view(items["public"], "series"), params={
        "source": source, "x": 3.1, "y": 55.9, "level": 2})
    point = expected.isel(depth=2).sel(lon=3.1, lat=55.9, method="nearest")
    assert r.json()["values"] == [float(v) for v in point.values]
    # choices outside the data: the API's 400, saying which
    r = await alice.get(view(items["public"], "map"), params={"source": source, "time": 5})
    assert (r.status_code, r.json()) == (400, {"code": "BadRequest",
                                               "description": "Time index 5 is outside 0 to 4."})
    r = await alice.get(view(items["public"], "map"), params={"source": source,
                                                              "variable": "nope"})
    assert (r.status_code, r.json()["description"]) == (
        400, "There is no variable 'nope': the dataset has temp.")
    r = await alice.get(view(items["public"], "rows"), params={"source": source})
    assert r.status_code == 404


async def test_a_parquet_file_read_by_columns_and_row_groups(alice, items, bucket) -> None:
    source = hrefs(bucket)["table"]
    expected = table()
    r = await alice.get(view(items["public"], "info"), params={"source": source})
    assert r.status_code == 200, r.text
    info = r.json()
    schema = pq.read_schema(io.BytesIO(s3_client_bytes(bucket, "table.parquet")))
    assert [c["name"] for c in info["columns"]] == schema.names
    assert [c["type"] for c in info["columns"]] == [
        "TIMESTAMP WITH TIME ZONE", "DOUBLE", "DOUBLE", "DOUBLE", "VARCHAR"]
    assert (info["rows"], info["row_groups"]) == (ROWS, [10_000] * 6)
    assert info["roles"] == {"lon": "lon", "lat": "lat", "time": "time"}
    r = await alice.get(view(items["public"], "rows"), params={
        "source": source, "offset": 42_210, "limit": 20, "columns": "salinity,station"})
    page = r.json()
    assert page["columns"] == ["salinity", "station"]
    assert page["rows"] == expected[["salinity", "station"]].iloc[42_210:42_230].values.tolist()
    # two columns of one row group (the footer besides): a tenth of the file
    assert page["read_bytes"] < len(s3_client_bytes(bucket, "table.parquet")) / 10
    chart = (await alice.get(view(items["public"], "chart"), params={
        "source": source, "column": "salinity"})).json()
    assert (chart["x"], chart["y"], chart["count"], chart["binned"]) == (
        "time", "salinity", ROWS, True)
    assert len(chart["points"]) == 2000
    lows = [low for _, low, _ in chart["ranges"]]
    assert min(lows) == expected["salinity"].min()
    points = (await alice.get(view(items["public"], "points"), params={
        "source": source})).json()
    assert (points["lon"], points["lat"], points["value"], points["count"],
            points["sampled"], len(points["points"])) == (
        "lon", "lat", "salinity", ROWS, True, 5000)
    r = await alice.get(view(items["public"], "rows"), params={
        "source": source, "columns": "salinity,nope"})
    assert (r.status_code, r.json()["description"]) == (400, "There is no column 'nope'.")


def s3_client_bytes(bucket: str, key: str) -> bytes:
    from tests.support.s3 import s3_client as client

    endpoint = _ENDPOINT[0]
    return client(endpoint).get_object(Bucket=bucket, Key=key)["Body"].read()


_ENDPOINT: list[str] = []


@pytest.fixture(autouse=True, scope="module")
def _endpoint(s3_endpoint: str) -> None:
    _ENDPOINT[:] = [s3_endpoint]


async def test_a_csv_counted_and_charted_as_pandas_reads_it(alice, items, bucket) -> None:
    source = hrefs(bucket)["readings"]
    expected = pd.read_csv(io.StringIO(CSV))
    info = (await alice.get(view(items["public"], "info"), params={"source": source})).json()
    assert info["rows"] == len(expected)
    assert [c["name"] for c in info["columns"]] == list(expected.columns)
    assert info["roles"] == {"lon": "lon", "lat": "lat", "time": None}
    chart = (await alice.get(view(items["public"], "chart"), params={"source": source})).json()
    assert (chart["x"], chart["y"], chart["binned"]) == (None, "air_temperature", False)
    assert [y for _, y in chart["points"]] == expected["air_temperature"].tolist()
    chart = (await alice.get(view(items["public"], "chart"), params={
        "source": source, "by": "lat"})).json()
    assert chart["points"] == expected.sort_values("lat")[["lat", "air_temperature"]
                                                          ].values.tolist()
    rows = (await alice.get(view(items["public"], "rows"), params={"source": source})).json()
    assert rows["rows"] == expected.values.tolist()


async def test_a_hidden_items_views_and_quicklook_are_a_missing_items(
        alice, bob, anyone, items, bucket, explorer_app) -> None:
    """Byte for byte: what bob and anyone get for alice's private item is what they get once
    it is gone."""
    private = items["private"]
    source = hrefs(bucket)["grid"]
    paths = [(view(private, "info"), {"source": source}),
             (view(private, "map"), {"source": source}),
             (f"/data/collections/{SST}/items/{private}/thumbnail.png", {})]
    r = await alice.get(*paths[1][:1], params=paths[1][1])
    assert r.status_code == 200  # hers
    r = await alice.get(paths[2][0])
    assert (r.status_code, r.headers["content-type"]) == (200, "image/png")
    hidden = {}
    for who, client in (("bob", bob), ("anyone", anyone)):
        for path, params in paths:
            r = await client.get(path, params=params)
            hidden[who, path] = (r.status_code, r.content, r.headers["content-type"])
    page = await anyone.get("/ui/explore", params={
        "collection": SST, "item": private, "source": source},
        headers={"Accept": "text/html"})
    assert (await alice.delete(f"/data/collections/{SST}/items/{private}")).status_code == 204
    for who, client in (("bob", bob), ("anyone", anyone)):
        for path, params in paths:
            r = await client.get(path, params=params)
            assert hidden[who, path] == (r.status_code, r.content,
                                         r.headers["content-type"]), (who, path)
            assert r.status_code == 404
            assert r.json() == {"code": "NotFoundError", "description": (
                f"Item {private} in Collection {SST} does not exist.")}
    missing = await anyone.get("/ui/explore", params={
        "collection": SST, "item": private, "source": source},
        headers={"Accept": "text/html"})
    assert (page.status_code, page.content) == (missing.status_code, missing.content)
    assert page.status_code == 404


async def test_a_quicklook_is_drawn_once_and_kept(alice, anyone, items, bucket,
                                                  settings: Settings) -> None:
    path = f"/data/collections/{SST}/items/{items['public']}/thumbnail.png"
    r = await anyone.get(path)
    assert (r.status_code, r.headers["content-type"], r.content[:8]) == (
        200, "image/png", b"\x89PNG\r\n\x1a\n")
    assert r.headers["cache-control"] == "private, max-age=300"
    kept = sorted((Path(settings.results_store_url.removeprefix("file://"))
                   / "thumbnails" / SST / items["public"]).glob("*.png"))
    assert len(kept) == 1 and kept[0].name.endswith("-all.png")
    assert kept[0].read_bytes() == r.content
    assert (await anyone.get(path)).content == r.content


async def test_reads_are_bounded(service_app, explorer_settings: dict[str, Any],
                                 issuer: TestIssuer, items, bucket) -> None:
    """What a map or a series would read is weighed before it is read: over the bound, it is
    refused saying how much; a table's page as soon as its reads pass the bound."""
    async with service_app(**{**explorer_settings, "explorer_read_bytes": "8Ki"}) as small:
        client = small.client(issuer.token("alice"))
        r = await client.get(view(items["public"], "map"), params={
            "source": hrefs(bucket)["grid"], "time": 5})
        assert r.status_code == 200  # one chunk of 600 bytes
        r = await client.get(view(items["public"], "series"), params={
            "source": hrefs(bucket)["grid"], "x": 0, "y": 45})
        # 20 chunks of 10 x 15 float32
        assert (r.status_code, r.json()) == (413, {
            "code": "RequestEntityTooLarge", "description":
            "This time series would read 11.7 KiB of the data, more than 8 KiB "
            "(EXPLORER_READ_BYTES): choose a smaller part."})
        r = await client.get(view(items["public"], "rows"), params={
            "source": hrefs(bucket)["table"], "offset": 30_000})
        assert (r.status_code, r.json()) == (413, {
            "code": "RequestEntityTooLarge", "description":
            "This would read more than 8 KiB of the data (EXPLORER_READ_BYTES): choose a "
            "smaller part."})


async def test_the_keys_stay_on_the_server(service_app,
                                           explorer_settings: dict[str, Any],
                                           issuer: TestIssuer, secured_s3, alice, items,
                                           bucket) -> None:
    """The storage refuses the service's keys (a wrong secret): the answer says so in words,
    naming the storage's address, never a key; nor does any answer that reads with them."""
    _, wrong = secured_s3
    item = make_item(unique("secured-"), data="s3://secured/data/sst.nc")
    async with service_app(**{**explorer_settings, "assets_s3": wrong}) as refused:
        client = refused.client(issuer.token("alice"))
        assert (await client.post(f"/data/collections/{SST}/items", json=item)).status_code \
            == 201
        for name in ("info", "map"):
            r = await client.get(view(item["id"], name),
                                 params={"source": "s3://secured/data/sst.nc"})
            assert (r.status_code, r.json()) == (502, {
                "code": "BadGateway", "description": "The storage refused the service's "
                "access to s3://secured/data/sst.nc (ASSETS_S3)."})
            assert wrong["secretAccessKey"] not in r.text
            assert wrong["accessKeyId"] not in r.text
    for name in ("info", "map"):
        r = await alice.get(view(items["public"], name), params={"source": hrefs(bucket)["grid"]})
        assert r.status_code == 200 and SECRET not in r.text and KEY_ID not in r.text


async def test_an_address_the_outbound_policy_refuses(alice, monkeypatch) -> None:
    """An http(s) asset is read through the outbound policy: a private address is refused
    (the tests' policy lets loopback through; here it is the default's)."""
    item = make_item(unique("outbound-"), data="http://127.0.0.1:9/table.csv")
    assert (await alice.post(f"/data/collections/{SST}/items", json=item)).status_code == 201
    monkeypatch.setenv("OUTBOUND_ALLOW", "")
    r = await alice.get(view(item["id"], "info"), params={"source": "http://127.0.0.1:9/table.csv"})
    assert (r.status_code, r.json()["description"]) == (422, (
        "table.csv: The address cannot be reached from here: give a public http(s) or S3 "
        "address (the service's OUTBOUND_ALLOW names the private networks it may reach)."))


async def test_the_explorer_page_names_what_it_draws(anyone, items, bucket) -> None:
    """The page of an asset anyone reads: its title, the item, the file and where its script
    reads the views; a job's file's (no item); and no file at all: 400."""
    source = hrefs(bucket)["grid"]
    r = await anyone.get("/ui/explore", params={
        "collection": SST, "item": items["public"], "source": source},
        headers={"Accept": "text/html"})
    assert r.status_code == 200
    assert '<h1 id="explore-title">grid</h1>' in r.text
    assert f'<code id="explore-source">{source}</code>' in r.text
    assert (f'data-views="http://testserver/data/collections/{SST}/items/'
            f'{items["public"]}/explore/"') in r.text
    assert 'data-format="zarr"' in r.text
    assert "Explored public</a>" in r.text
    # its scripts its own files only; inline styles for the charts; pictures as data: URLs
    policy = r.headers["content-security-policy"]
    assert "script-src 'self';" in policy and "style-src 'self' 'unsafe-inline'" in policy
    job = "http://testserver/processes/jobs/0b0e6f36-2b7b-4a7e-9a55-7c5d9f6f1b6c/files/m/x.nc"
    r = await anyone.get("/ui/explore", params={"source": job})
    assert r.status_code == 200
    assert 'data-views="http://testserver/explore/"' in r.text and 'data-format="netcdf"' in r.text
    r = await anyone.get("/ui/explore")
    assert r.status_code == 400
    assert "Nothing to explore" in r.text
    r = await anyone.get("/ui/explore", params={"collection": SST, "item": items["public"],
                                                 "source": "s3://elsewhere/x.zarr"})
    assert (r.status_code, f"Item {items['public']} has no asset at s3://elsewhere/x.zarr."
            in r.text) == (404, True)


async def test_search_results_explore_every_explorable_asset(anyone, items, bucket) -> None:
    """Our search page: an Explore link on each Zarr, NetCDF, Parquet and CSV asset."""
    r = await anyone.get("/ui/search", params={"collections": SST, "q": "explored"})
    assert r.status_code == 200
    row = r.text[r.text.index("Explored public"):]
    row = row[:row.index("</tr>")]
    links = [part.split('"', 1)[0] for part in row.split('href="')[1:]]
    assert sorted(link.replace("&amp;", "&") for link in links) == sorted(
        f"http://testserver/ui/explore?collection={SST}&item={items['public']}&source="
        + quote(href, safe="") for href in hrefs(bucket).values())
    assert ">Explore Zarr</a>" in row and ">Explore CSV</a>" in row


@pytest.mark.unit
def test_the_services_access_to_s3(tmp_path: Path) -> None:
    """ASSETS_S3 when set; else the demo S3 with the embedded database (`make run`, `make
    demo-s3`: the demo items' data), else none (anonymous)."""
    from stac_ext.settings import DEMO_S3

    embedded = Settings(geocatalog_data_dir=tmp_path)
    assert embedded.assets_s3_section == DEMO_S3
    assert DEMO_S3["endpoint"] == "http://127.0.0.1:9000"  # make demo-s3's port
    elsewhere = Settings(database_url="postgresql://u@db/c", geocatalog_data_dir=tmp_path)
    assert elsewhere.assets_s3_section == {}
    given = Settings(database_url="postgresql://u@db/c", geocatalog_data_dir=tmp_path,
                     assets_s3={"endpoint": "https://s3.example", "accessKeyId": "k"})
    assert given.assets_s3_section == {"endpoint": "https://s3.example", "accessKeyId": "k"}
