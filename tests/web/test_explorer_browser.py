"""The data explorer in Chromium, on the demo data and the demo S3 as `make run` and `make
demo-s3` serve them (the demo items given their quicklooks by `geocatalog thumbnails`):
what each page shows is read through its DOM (labels, axis ranges, values) and compared
with what xarray, pandas and pyarrow read of the same files. Every step's screenshot goes
under `.artifacts/web-explorer/`; those of the docs under `docs/img/web` with `make
screenshots`."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import fsspec
import httpx
import pandas as pd
import pyarrow.parquet as pq
import pytest
import xarray as xr
from playwright.sync_api import Browser, Page, expect

from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.settings import Settings
from tests.support.browser import BROWSER_TESTS, chromium
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.cwl import cdo_mean
from tests.support.http import free_port, uvicorn_serving
from tests.support.paths import ROOT
from tests.support.s3 import KEY_ID, SECRET, s3_client

pytestmark = BROWSER_TESTS

SHOTS = ROOT / ".artifacts" / "web-explorer"
#: The docs' pictures (docs/scientists/explorer.md): retaken into docs/img by `make
#: screenshots`, else beside the run's own
DOCS_SHOTS = ROOT / ("docs/img" if os.environ.get("UPDATE_SCREENSHOTS") else
                     ".artifacts/docs-img") / "web"
DOCS_STEPS = frozenset({"explorer-map", "explorer-series", "explorer-table",
                        "explorer-parquet", "quicklooks", "search-explore",
                        "job-file-explored"})
#: How long a page may take to read its file and draw, on this busy machine (not a measure
#: of speed: `make bench` measures that)
DRAWN = 60_000
SST = "climate_forecast-sea_surface_temperature"
SALINITY = "climate_forecast-sea_water_salinity"
NORTH_SEA = "sea_surface_temperature-north-sea-2022"
SALINITY_ITEM = "sea_water_salinity-baltic-2021"


def shot(page: Page, name: str, whole: bool = True) -> None:
    """The page's picture (`whole`: all of it, else what is in view)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"{name}.png", full_page=whole)
    if name in DOCS_STEPS:
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=DOCS_SHOTS / f"{name}.jpg", type="jpeg", quality=70,
                        full_page=whole)


@pytest.fixture(scope="module")
def demo_s3(s3_endpoint: str) -> dict[str, str]:
    """The demo bucket, as `geocatalog demo-s3` fills it; the service's access to it (the
    server accepts any key)."""
    from stac_ext.publish.demo_files import catalog_data

    s3 = s3_client(s3_endpoint)
    if "demo" not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        s3.create_bucket(Bucket="demo")
        with (ROOT / "stac_ext" / "demo" / "items.ndjson").open() as lines:
            for key, data in catalog_data((json.loads(line) for line in lines), "demo"):
                s3.put_object(Bucket="demo", Key=key, Body=data)
    return {"endpoint": s3_endpoint, "accessKeyId": KEY_ID, "secretAccessKey": SECRET,
            "defaultRegion": "us-east-1"}


def s3fs_options(access: dict[str, str]) -> dict:
    return {"key": access["accessKeyId"], "secret": access["secretAccessKey"],
            "client_kwargs": {"endpoint_url": access["endpoint"]}}


@pytest.fixture(scope="module")
def explorer_service(settings: Settings, demo_s3: dict[str, str],
                     tmp_path_factory: pytest.TempPathFactory
                     ) -> Iterator[tuple[str, LocalIssuer]]:
    """The service as `make run` starts it (demo data, the local issuer, a job worker),
    reading the demo S3; the demo items' quicklooks made by `geocatalog thumbnails`. Its
    address, and its issuer (to mint its users' tokens)."""
    url = new_database(settings.database_url or "", "explorer_")
    port = free_port()
    data_dir = tmp_path_factory.mktemp("explorer-data")
    env = {"DATABASE_URL": url, "GEOCATALOG_DATA_DIR": str(data_dir), "OIDC_ISSUER": "",
           "GEOCATALOG_PORT": str(port), "ASSETS_S3": json.dumps(demo_s3)}
    for command in (["migrate"], ["demo-data"], ["thumbnails"]):
        done = run_cli(*command, env=env)
        assert done.returncode == 0, (command, done.stderr[-2000:])
    assert done.stdout.strip() == ("quicklooks: 48 drawn, 0 to draw when first viewed, 0 not "
                                   "drawn (their data could not be read)")
    shutil.rmtree(SHOTS, ignore_errors=True)
    with uvicorn_serving(settings, port=port, IN_PROCESS_WORKER="true", **env) as base:
        # the explorer's libraries loaded (xarray, zarr, DuckDB, matplotlib: seconds, once
        # per process) before the first page counts on them
        for href in demo_explorer_links(base)[:2]:
            query = parse_qs(urlsplit(href).query)
            views = (f"{base}/data/collections/{query['collection'][0]}/items/"
                     f"{query['item'][0]}/explore/info")
            assert httpx.get(views, params={"source": query["source"][0]},
                             timeout=120).status_code == 200
        yield base, LocalIssuer(data_dir / "issuer-key.json", f"{base}/auth")


@pytest.fixture(scope="module")
def explorer_server(explorer_service: tuple[str, LocalIssuer]) -> str:
    return explorer_service[0]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser, explorer_server: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  base_url=explorer_server)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    # nothing outside this machine (the basemap's tiles, remote schemas: stopped)
    tab.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/]).*"), lambda route: route.abort())
    yield tab
    context.close()
    assert not errors, errors


def sign_in(page: Page, user: str = "alice") -> None:
    """Through the local issuer's form, as the docs say."""
    page.goto("/ui/jobs")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_label("User name").fill(user)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {user}")).to_be_visible()


def open_zarr(demo_s3: dict[str, str], href: str) -> xr.Dataset:
    return xr.open_zarr(fsspec.get_mapper(href, **s3fs_options(demo_s3)), chunks=None)


def s3_bytes(demo_s3: dict[str, str], href: str) -> bytes:
    with fsspec.open(href, "rb", **s3fs_options(demo_s3)) as f:
        return f.read()


def item(base: str, collection: str, item_id: str) -> dict:
    return httpx.get(f"{base}/data/collections/{collection}/items/{item_id}").json()


def test_a_zarr_map_its_time_slider_and_a_time_series(page: Page, explorer_server: str,
                                                      demo_s3: dict[str, str]) -> None:
    """From STAC Browser's item page, Explore on the Zarr asset: the variable's map with its
    name, units and colour bar; the time slider changes it; a click draws the time series
    of the nearest grid point, xarray's values."""
    found = item(explorer_server, SST, NORTH_SEA)
    href = found["assets"]["data"]["href"]
    expected = open_zarr(demo_s3, href)["sea_surface_temperature"]
    page.goto(f"/browser/collections/{SST}/items/{NORTH_SEA}")
    expect(page.get_by_role("heading", name="Sea surface temperature, north sea, 2022")
           ).to_be_visible()
    # its asset opened: STAC Browser's buttons, ours among them
    page.get_by_role("button", name="Sea surface temperature north-sea 2022 (Zarr)").click()
    with page.context.expect_page() as opened:
        page.locator("#asset-data").get_by_role("link", name="Explore").click()
    explorer = opened.value
    explorer.wait_for_load_state()
    assert urlsplit(explorer.url).path == "/ui/explore"
    assert parse_qs(urlsplit(explorer.url).query) == {
        "collection": [SST], "item": [NORTH_SEA], "source": [href]}

    # the map at the first time step: its name, units, colour bar and range are xarray's
    expect(explorer.locator("#map-image")).to_be_visible(timeout=DRAWN)
    expect(explorer.locator("#map-caption")).to_have_text(
        "sea surface temperature (sea_surface_temperature), K at 2022-01-01T00:00:00Z")
    expect(explorer.locator("#colorbar")).to_be_visible()
    expect(explorer.locator("#colorbar-units")).to_have_text("K")
    first = expected.isel(time=0).values

    def colour_range() -> tuple[float, float]:
        return (float(explorer.locator("#colorbar-min").get_attribute("data-value") or "nan"),
                float(explorer.locator("#colorbar-max").get_attribute("data-value") or "nan"))

    assert colour_range() == (float(first.min()), float(first.max()))
    lat, lon = expected["lat"].values, expected["lon"].values
    half = (lon[1] - lon[0]) / 2
    expect(explorer.locator("#map-west")).to_have_text(f"{lon[0] - half:.6g}")
    expect(explorer.locator("#map-east")).to_have_text(f"{lon[-1] + half:.6g}")
    shot(explorer, "explorer-map")

    # the time slider: another step, another picture and range
    before = explorer.locator("#map-image").get_attribute("src")
    explorer.locator("#time-slider").fill("6")
    expect(explorer.locator("#time-value")).to_have_text("2022-07-01T00:00:00Z")
    expect(explorer.locator("#map-image")).to_have_attribute("data-time", "2022-07-01T00:00:00Z",
                                                             timeout=DRAWN)
    assert explorer.locator("#map-image").get_attribute("src") != before
    july = expected.isel(time=6).values
    assert colour_range() == (float(july.min()), float(july.max()))

    # a click: the nearest grid point's values over the year, xarray's
    box = explorer.locator("#map-image").bounding_box()
    assert box is not None
    explorer.locator("#map-image").click(position={"x": box["width"] * 0.3,
                                                   "y": box["height"] * 0.6})
    expect(explorer.locator("#series-values tbody tr")).to_have_count(12, timeout=DRAWN)
    point = explorer.locator("#series-point")
    x, y = float(point.get_attribute("data-x") or "nan"), float(point.get_attribute("data-y")
                                                                  or "nan")
    west, east = lon[0] - half, lon[-1] + half
    north = lat[-1] + (lat[1] - lat[0]) / 2
    south = lat[0] - (lat[1] - lat[0]) / 2
    clicked = (west + 0.3 * (east - west), north - 0.6 * (north - south))
    nearest = expected.sel(lon=clicked[0], lat=clicked[1], method="nearest")
    assert (x, y) == (float(nearest["lon"]), float(nearest["lat"]))
    shown = [float(v) for v in explorer.locator("#series-values tbody td[data-value]")
             .evaluate_all("cells => cells.map(c => c.dataset.value)")]
    assert shown == [float(v) for v in nearest.values]
    expect(explorer.locator("#series-chart svg")).to_be_visible()
    shot(explorer, "explorer-series")


def test_a_csv_and_a_parquet_file(page: Page, explorer_server: str,
                                  demo_s3: dict[str, str]) -> None:
    """A CSV's row count and chart are pandas' reading of it; a Parquet file's schema is
    pyarrow's, its chart against time, its points on a map."""
    found = item(explorer_server, SST, NORTH_SEA)
    csv = found["assets"]["table"]["href"]
    expected = pd.read_csv(io.BytesIO(s3_bytes(demo_s3, csv)))
    [link] = [link for link in found["links"] if link["rel"] == "explorer"
              and csv in parse_qs(urlsplit(link["href"]).query)["source"]]
    page.goto(link["href"])
    expect(page.locator("#row-count")).to_have_attribute("data-rows", str(len(expected)),
                                                         timeout=DRAWN)
    expect(page.locator("#row-count")).to_have_text(
        f"{len(expected)} rows, {len(expected.columns)} columns")
    expect(page.locator("#rows tbody tr")).to_have_count(len(expected))
    summary = page.locator("#chart-summary")
    expect(summary).to_have_attribute("data-count", str(len(expected)))
    column = expected.columns[-1]
    assert (float(summary.get_attribute("data-min") or "nan"),
            float(summary.get_attribute("data-max") or "nan")) == (
        expected[column].min(), expected[column].max())
    charted = [float(v) for v in page.locator("#chart-values td[data-value]").evaluate_all(
        "cells => cells.map(c => c.dataset.value)")]
    assert charted == expected[column].tolist()
    expect(page.locator("#chart svg")).to_be_visible()
    shot(page, "explorer-table")

    salinity = item(explorer_server, SALINITY, SALINITY_ITEM)
    parquet = salinity["assets"]["data"]["href"]
    schema = pq.read_schema(io.BytesIO(s3_bytes(demo_s3, parquet)))
    table = pq.read_table(io.BytesIO(s3_bytes(demo_s3, parquet))).to_pandas()
    [link] = [link for link in salinity["links"] if link["rel"] == "explorer"]
    page.goto(link["href"])
    expect(page.locator("#schema tbody tr")).to_have_count(len(schema.names), timeout=DRAWN)
    assert page.locator("#schema tbody td[data-column]").evaluate_all(
        "cells => cells.map(c => c.dataset.column)") == schema.names
    expect(page.locator("#row-count")).to_have_attribute("data-rows", str(len(table)))
    expect(page.locator("#chart-by")).to_have_value("time")
    summary = page.locator("#chart-summary")
    expect(summary).to_have_attribute("data-count", str(len(table)))
    assert (float(summary.get_attribute("data-min") or "nan"),
            float(summary.get_attribute("data-max") or "nan")) == (
        table["sea_water_salinity"].min(), table["sea_water_salinity"].max())
    expect(page.locator("#points-summary")).to_have_text(
        f"{len(table)} points, coloured by sea_water_salinity")
    # a row group of its own, and fewer columns read
    page.locator("#row-group").select_option(index=2)
    expect(page.locator("#rows-range")).to_have_text(f"rows 25 to 36 of {len(table)}")
    page.get_by_label("Read station").uncheck()
    expect(page.locator("#rows thead th")).to_have_count(len(schema.names) - 1)
    shot(page, "explorer-parquet")


def demo_explorer_links(base: str) -> list[str]:
    found = httpx.get(f"{base}/data/search", params={"limit": 100}).json()["features"]
    assert len(found) == 48
    return sorted(link["href"] for feature in found for link in feature["links"]
                  if link["rel"] == "explorer")


def draws(page: Page, href: str) -> None:
    """The page draws what its file holds (waiting as long as its reads take on this
    busy machine: not a measure of speed, `make bench` measures that)."""
    page.goto(href)
    fmt = page.locator("#explorer").get_attribute("data-format")
    if fmt in ("zarr", "netcdf"):
        expect(page.locator("#map-image")).to_have_attribute(
            "src", re.compile("^data:image/png"), timeout=DRAWN)
    else:
        expect(page.locator("#rows tbody tr").first).to_be_visible(timeout=DRAWN)
        expect(page.locator("#row-count")).to_have_attribute("data-rows", re.compile(r"^\d+$"))
    expect(page.locator("#explore-error")).to_be_hidden()


def test_every_explorer_link_of_the_demo_data_draws(page: Page, explorer_server: str) -> None:
    """No dead link: signed out, then signed in."""
    links = demo_explorer_links(explorer_server)
    assert len(links) == 36  # 12 items with a Zarr and a CSV, 12 with a Parquet file
    for href in links:
        draws(page, href)
    sign_in(page)
    for href in links:
        draws(page, href)


def test_quicklooks_in_stac_browser_and_our_search(page: Page, explorer_server: str) -> None:
    """The demo items' quicklooks in STAC Browser's item cards; our search results link
    Explore on each explorable asset, beside the item's quicklook."""
    page.goto(f"/browser/collections/{SST}")
    cards = page.locator(".item-card img.thumbnail")
    expect(cards.first).to_be_visible()
    expect(cards.first).to_have_attribute("src", re.compile(r"/thumbnail\.png$"))
    # the cards in view drawn (STAC Browser loads the others as they scroll into view)
    page.wait_for_function("() => { const i = document.querySelector('.item-card "
                           "img.thumbnail'); return i.complete && i.naturalWidth > 100; }")
    shot(page, "quicklooks", whole=False)  # the cards below load as they come into view
    page.goto('/ui/search?q="north sea"')
    row = page.locator("#results tbody tr", has_text="Sea surface temperature, north sea, 2022")
    expect(row.get_by_role("link", name="Explore Zarr")).to_be_visible()
    expect(row.get_by_role("link", name="Explore CSV")).to_be_visible()
    expect(row.locator("img.quicklook")).to_be_visible()
    page.wait_for_function("() => [...document.querySelectorAll('img.quicklook')]"
                           ".every(i => i.complete && i.naturalWidth > 100)")
    air = page.locator("#results tbody tr", has_text="Air temperature, north sea, 2022")
    expect(air.get_by_role("link", name="Explore NetCDF")).to_be_visible()
    shot(page, "search-explore")
    air.get_by_role("link", name="Explore NetCDF").click()
    expect(page.locator("#map-caption")).to_contain_text("air temperature (air_temperature), K",
                                                         timeout=DRAWN)


def test_a_jobs_netcdf_previewed_then_published_with_its_quicklook(
        page: Page, explorer_service: tuple[str, LocalIssuer],
        demo_s3: dict[str, str]) -> None:
    """Dora's CDO mean of a demo NetCDF: its result previewed from the job's page before it
    is published; published into her catalog, STAC Browser's item list shows its quicklook."""
    explorer_server, issuer = explorer_service
    token = issuer.mint("dora", "geocatalog-processes", rights=["deployProcess"])
    data_token = issuer.mint("dora", "geocatalog")
    headers = {"Authorization": f"Bearer {token}"}
    run = uuid.uuid4().hex[:8]
    process = f"air-mean-{run}"
    r = httpx.post(f"{explorer_server}/processes/processes", content=cdo_mean(process),
                   headers={**headers, "Content-Type": "application/cwl+yaml"})
    assert r.status_code == 201, r.text
    source = "s3://demo/air_temperature/north-sea/2022/air_temperature.nc"
    catalog = f"means-{run}"
    r = httpx.post(f"{explorer_server}/data/catalogs", headers={
        "Authorization": f"Bearer {data_token}"}, json={
        "id": catalog, "type": "Catalog", "description": "Dora's means"})
    assert r.status_code == 201, r.text
    jobs = {}
    for name, publish in (("preview", None), ("published", {"catalog": catalog,
                                                            "visibility": "public"})):
        inputs = {"files": [{"href": source}], "s3": demo_s3,
                  **({"publish": publish} if publish else {})}
        r = httpx.post(f"{explorer_server}/processes/processes/{process}/execution",
                       headers=headers, json={"processInputs": inputs})
        assert r.status_code == 201, r.text
        jobs[name] = r.headers["Location"]
    for url in jobs.values():
        assert wait_for_job(url, headers) == "successful"

    sign_in(page, "dora")
    page.goto(f"/ui/jobs/{jobs['preview'].rsplit('/', 1)[1]}")
    result = page.locator(".result-file", has_text="mean.nc")
    expect(result.get_by_role("link", name="Explore")).to_be_visible()
    result.get_by_role("link", name="Explore").click()
    expect(page.locator("#map-image")).to_have_attribute("src", re.compile("^data:image/png"),
                                                         timeout=DRAWN)
    expect(page.locator("#map-caption")).to_contain_text("(air_temperature), K")
    shot(page, "job-file-explored")

    page.goto(f"/browser/catalogs/{catalog}")
    card = page.locator(".item-card img.thumbnail")
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("src", re.compile(r"/thumbnail\.png$"))
    card.scroll_into_view_if_needed()
    page.wait_for_function(  # drawn on this first view, from the job's file
        "() => { const i = document.querySelector('.item-card img.thumbnail');"
        " return i && i.complete && i.naturalWidth > 100; }", timeout=DRAWN)


def wait_for_job(url: str, headers: dict[str, str]) -> str:
    import time

    for _ in range(600):
        status = httpx.get(url, headers=headers).json()["status"]
        if status in ("successful", "failed", "dismissed"):
            return str(status)
        time.sleep(0.2)
    return "still running"
