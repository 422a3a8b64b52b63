"""Generated content (stac_extensions, example, explorer and notebook links) on every item
the API returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import numpy as np
import pytest
import xarray as xr

from stac_ext.content.decorate import ItemDecorator
from tests.support.file_server import serving_folder
from tests.support.stac import make_item

EXAMPLE_LINKS = "https://stac-extensions.github.io/example-links/v0.0.1/schema.json"
EO = "https://stac-extensions.github.io/eo/v1.1.0/schema.json"
PROJ = "https://stac-extensions.github.io/projection/v2.0.0/schema.json"
CUBE = "https://stac-extensions.github.io/datacube/v2.2.0/schema.json"


def rels(item: dict, rel: str) -> list[dict]:
    return [link for link in item["links"] if link["rel"] == rel]


async def post(client: httpx.AsyncClient, collection: str, item: dict) -> dict:
    r = await client.post(f"/data/collections/{collection}/items", json=item)
    assert r.status_code == 201, r.text
    return r.json()


async def every_view(client: httpx.AsyncClient, collection: str, item_id: str) -> list[dict]:
    """The item as each read endpoint returns it."""
    base = f"/data/collections/{collection}/items"
    views = [(await client.get(f"{base}/{item_id}")).json()]
    for page in [(await client.get(f"{base}?limit=100")).json(),
                 (await client.get("/data/search", params={"ids": item_id,
                                                           "collections": collection})).json(),
                 (await client.post("/data/search", json={"ids": [item_id],
                                                          "collections": [collection]})).json()]:
        views += [f for f in page["features"] if f["id"] == item_id]
    assert len(views) == 4
    return views


async def test_extension_uris_from_fields(alice_data: httpx.AsyncClient, collection: str) -> None:
    item = make_item("ext")
    item["properties"]["eo:cloud_cover"] = 12
    item["properties"]["cube:dimensions"] = {}
    item["assets"]["data"]["proj:code"] = "EPSG:4326"
    item["stac_extensions"] = [EO, "https://example.org/custom/v1/schema.json"]
    created = await post(alice_data, collection, item)
    for view in [created, *await every_view(alice_data, collection, "ext")]:
        uris = view["stac_extensions"]
        assert uris[:2] == [EO, "https://example.org/custom/v1/schema.json"]
        assert sorted(uris[2:]) == sorted([CUBE, PROJ])
        assert len(uris) == len(set(uris))


async def test_python_example_for_netcdf_and_zarr(alice_data: httpx.AsyncClient, collection):
    await post(alice_data, collection, make_item("nc", data="https://d.example/t.nc"))
    await post(alice_data, collection, make_item("zarr", data="s3://bucket/t.zarr"))
    typed = make_item("typed", data="https://d.example/download?id=1")
    typed["assets"]["data"]["type"] = "application/x-netcdf"
    await post(alice_data, collection, typed)
    for item_id in ("nc", "zarr", "typed"):
        for view in await every_view(alice_data, collection, item_id):
            [example] = rels(view, "example")
            assert example["type"] == "text/x-python"
            assert example["example:language"] == "Python"
            assert example["title"]
            assert example["href"] == (f"http://testserver/data/collections/{collection}"
                                       f"/items/{item_id}/example.py")
            assert EXAMPLE_LINKS in view["stac_extensions"]
    # programs get the link's type; a browser a page of text (not STAC Browser: no redirect)
    url = f"/data/collections/{collection}/items/nc/example.py"
    r = await alice_data.get(url)
    assert (r.status_code, r.headers["content-type"]) == (200, "text/x-python; charset=utf-8")
    assert r.headers["content-disposition"] == 'inline; filename="example.py"'
    page = await alice_data.get(url, headers={"Accept": "text/html,*/*;q=0.8"})
    assert (page.status_code, page.headers["content-type"]) == (200, "text/plain; charset=utf-8")
    assert page.text == r.text and "def open_data():" in page.text


async def test_no_example_when_one_exists_or_format_is_other(alice_data, collection):
    own = make_item("own", data="https://d.example/t.nc")
    own["links"] = [{"rel": "example", "href": "https://d.example/mine.py",
                     "type": "text/x-python", "example:language": "Python"}]
    await post(alice_data, collection, own)
    await post(alice_data, collection, make_item("tif", data="https://d.example/t.tif"))
    [view] = (await every_view(alice_data, collection, "own"))[:1]
    assert [link["href"] for link in rels(view, "example")] == ["https://d.example/mine.py"]
    assert view["stac_extensions"].count(EXAMPLE_LINKS) == 1
    for view in await every_view(alice_data, collection, "tif"):
        assert not rels(view, "example") and not rels(view, "explorer")
        assert EXAMPLE_LINKS not in view["stac_extensions"]
    assert (await alice_data.get(f"/data/collections/{collection}/items/tif/example.py")
            ).status_code == 404


async def test_explorer_links_for_zarr_parquet_csv(alice_data: httpx.AsyncClient, collection):
    hrefs = {"z": "s3://b/cube.zarr", "p": "https://d.example/t.parquet",
             "c": "https://d.example/a b.csv", "n": "https://d.example/t.nc"}
    await post(alice_data, collection, make_item("explore", **hrefs))
    for view in await every_view(alice_data, collection, "explore"):
        got = sorted(link["href"] for link in rels(view, "explorer"))
        expected = sorted(f"https://explorer.example/data-explorer?source={quote(h, safe='')}"
                          for k, h in hrefs.items() if k != "n")
        assert got == expected
        assert all(link["type"] == "text/html" and link["title"]
                   for link in rels(view, "explorer"))


async def test_notebook_link_per_notebook_example(alice_data: httpx.AsyncClient, collection):
    item = make_item("nb")
    item["links"] = [{"rel": "example", "href": "https://d.example/run.ipynb",
                      "type": "application/x-ipynb+json", "title": "Walkthrough",
                      "example:language": "Python", "example:container": True}]
    await post(alice_data, collection, item)
    for view in await every_view(alice_data, collection, "nb"):
        [notebook] = rels(view, "notebook")
        assert notebook["href"] == ("https://notebooks.example/hub/user-redirect/lab?fromURL="
                                    + quote("https://d.example/run.ipynb", safe=""))
        assert "Walkthrough" in notebook["title"]


async def test_loaded_items_and_config_changes(service_app, alice_data, collection, database_url,
                                               tmp_path: Path) -> None:
    doc = make_item("loaded", collection_id=collection, data="s3://b/x.zarr")
    doc.update(stac_version="1.0.0", bbox=[0, 0, 1, 1], links=[])
    path = tmp_path / "items.ndjson"
    path.write_text(json.dumps(doc))
    out = subprocess.run([sys.executable, "-m", "stac_ext.cli", "load", str(path)],
                         env={**os.environ, "DATABASE_URL": database_url},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    [view] = (await every_view(alice_data, collection, "loaded"))[:1]
    assert rels(view, "example") and rels(view, "explorer")

    async with service_app(explorer_url_template="https://new.example/?u={href}") as other:
        item = (await other.client().get(f"/data/collections/{collection}/items/loaded")).json()
    [explorer] = rels(item, "explorer")
    assert explorer["href"] == "https://new.example/?u=" + quote("s3://b/x.zarr", safe="")


async def test_generated_content_and_owner_search_can_be_off(service_app, alice_data,
                                                             collection):
    """`GENERATED_CONTENT=false` / `OWNER_SEARCH=false` (what `make bench` compares against):
    stock items, and `owner` is not a search parameter."""
    doc = make_item("plain", collection_id=collection, data="s3://b/y.zarr")
    assert (await alice_data.post(f"/data/collections/{collection}/items", json=doc)).status_code \
        == 201
    async with service_app(generated_content=False, owner_search=False) as stock_like:
        c = stock_like.client()
        item = (await c.get(f"/data/collections/{collection}/items/plain")).json()
        search = await c.post("/data/search", json={"owner": "nobody", "ids": ["plain"]})
    assert not rels(item, "example") and not rels(item, "explorer")
    assert [link["rel"] for link in item["links"]] == ["collection", "parent", "root", "self"]
    assert item["stac_extensions"] == []
    # unknown to the search model: ignored, as stock ignores any unknown POST field
    assert [f["id"] for f in search.json()["features"]] == ["plain"]


@pytest.fixture
def data_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Serves `tmp_path` over real HTTP on loopback."""
    with serving_folder(tmp_path) as base:
        yield base, tmp_path


async def test_generated_example_runs(alice_data: httpx.AsyncClient, collection, data_server):
    base, folder = data_server
    temperature = xr.Dataset(
        {"sst": (("time", "lat", "lon"), np.arange(8, dtype="float32").reshape(2, 2, 2),
                 {"standard_name": "sea_surface_temperature", "units": "K"})},
        coords={"time": [0, 1], "lat": [10.0, 11.0], "lon": [20.0, 21.0]},
    )
    temperature.to_netcdf(folder / "sst.nc", engine="h5netcdf")
    temperature.to_zarr(folder / "sst.zarr", consolidated=True, zarr_format=2)
    created = await post(alice_data, collection, make_item(
        "runnable", nc=f"{base}/sst.nc", zarr=f"{base}/sst.zarr"))
    [example] = rels(created, "example")
    r = await alice_data.get(example["href"])
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/x-python")
    script = folder / "example.py"
    script.write_text(r.text)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("sst") >= 2  # both datasets opened and printed
    assert "Dimensions" in out.stdout


@pytest.mark.parametrize("template", [
    "https://explorer.example/?source={href}", "{href}", "https://x.example/{{literal}}/{href}",
    "https://x.example/?a={href}&b={href}", "https://x.example/no-field"])
def test_link_templates_are_filled_as_str_format_fills_them(template: str) -> None:
    """The templates' usual form (one `{href}`) is filled by concatenation; any other form
    by `str.format`, so every template gives what `str.format` gives."""
    item = {"id": "i", "collection": "c", "links": [
        {"rel": "example", "type": "application/x-ipynb+json", "href": "s3://b/n.ipynb"}],
        "assets": {"data": {"href": "s3://b/x y.zarr", "type": "application/vnd+zarr"}}}
    ItemDecorator(template, template).decorate(item, "https://h/data/")
    assert [link["href"] for link in item["links"] if link["rel"] in ("explorer", "notebook")
            ] == [template.format(href=quote("s3://b/x y.zarr", safe="")),
                  template.format(href=quote("s3://b/n.ipynb", safe=""))]


@pytest.mark.parametrize("href", [
    "".join(chr(c) for c in range(128)), "s3://b/a path/x.zarr?v=1&w=#frag%20",
    "s3://bucket/a_b/c-d/e.f~g/x.zarr", "https://h.example:8080/p/x.zarr/",
    "https://h.example/é/ü.zarr", "s3://b/日本/x.zarr", "", "~_.-AZaz09"])
def test_hrefs_in_generated_links_are_encoded_as_quote_encodes_them(href: str) -> None:
    """Every ASCII character, and hrefs beyond ASCII (left to `quote` itself)."""
    item = {"id": "i", "collection": "c", "links": [],
            "assets": {"data": {"href": href or "x", "type": "application/vnd+zarr"}}}
    ItemDecorator("{href}", "{href}").decorate(item, "https://h/data/")
    [explorer] = [link for link in item["links"] if link["rel"] == "explorer"]
    assert explorer["href"] == quote(href or "x", safe="")


def test_extension_uris_from_every_part_of_an_item() -> None:
    """Prefixes in properties, assets, stored links and the generated example link, each
    named once, after the URIs the item lists itself; unknown prefixes name nothing."""
    item = {"id": "i", "collection": "c", "stac_extensions": ["https://own.example/s.json"],
            "properties": {"eo:cloud_cover": 1, "zz:x": 2},
            "assets": {"data": {"href": "s3://b/x.nc", "type": "application/netcdf",
                                "raster:bands": []}},
            "links": [{"rel": "x", "href": "h", "proj:code": "EPSG:4326"}]}
    ItemDecorator("{href}", "{href}").decorate(item, "https://h/data/")
    assert item["stac_extensions"][0] == "https://own.example/s.json"
    named = [uri.split("/")[3] for uri in item["stac_extensions"][1:]]
    assert named == ["eo", "example-links", "projection", "raster"]


@pytest.mark.unit
def test_an_examples_docstring_names_its_format_once() -> None:
    from stac_ext.content.example import render_example

    source = render_example({"id": "i", "collection": "c", "assets": {
        "data": {"href": "s3://demo/x.zarr", "type": "application/vnd+zarr",
                 "title": "Sea surface temperature (Zarr)"},
        "nc": {"href": "https://example.org/x.nc", "title": "Air temperature"}}})
    assert source is not None
    assert '"""Sea surface temperature (Zarr)."""' in source
    assert '"""Air temperature (NetCDF). xarray picks the engine' in source


@pytest.mark.unit
@pytest.mark.parametrize("base", ["https://h/data/", "https://h/cat/data/"])
def test_without_a_template_the_links_open_the_services_own_explorer(base: str) -> None:
    """No EXPLORER_URL_TEMPLATE: each Zarr, Parquet and CSV asset opens the service's own
    explorer page (under the service's root, which the API's root ends in), naming the item
    and the asset's address; NetCDF gets none (only those three formats get a link)."""
    item = {"id": "a b", "collection": "c/1", "links": [], "assets": {
        "z": {"href": "s3://b/x y.zarr", "type": "application/vnd+zarr", "title": "Grid"},
        "t": {"href": "https://h.example/t.csv"},
        "n": {"href": "s3://b/n.nc"}}}
    ItemDecorator(None, None, explorer_page="ui/explore").decorate(item, base)
    service = base.removesuffix("data/")
    assert [(link["title"], link["href"]) for link in item["links"]
            if link["rel"] == "explorer"] == [
        ("Open 'Grid' in the data explorer",
         f"{service}ui/explore?collection=c%2F1&item=a%20b&source=s3%3A%2F%2Fb%2Fx%20y.zarr"),
        ("Open 't' in the data explorer",
         f"{service}ui/explore?collection=c%2F1&item=a%20b"
         "&source=https%3A%2F%2Fh.example%2Ft.csv")]
    # neither a template nor a page of its own: no link at all
    bare = {"id": "i", "collection": "c", "links": [],
            "assets": {"z": {"href": "s3://b/x.zarr"}}}
    ItemDecorator(None, None).decorate(bare, base)
    assert not [link for link in bare["links"] if link["rel"] == "explorer"]
