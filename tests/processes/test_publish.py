"""publish-dataset end to end: real S3 server, real files, /processes then /data."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from stac_ext.data_api.urls import api_root
from stac_ext.publish.demo_files import campaign
from stac_ext.publish.run import report
from stac_ext.publish.writer import Outcome
from tests.support.http import free_port, http_client
from tests.support.issuer import TestIssuer
from tests.support.jobs import execute, wait_for
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import unique


@pytest.fixture
def user_data(s3_endpoint: str) -> str:
    s3 = s3_client(s3_endpoint)
    bucket = unique("user-data-")
    s3.create_bucket(Bucket=bucket)
    for key, data in campaign():
        s3.put_object(Bucket=bucket, Key=f"campaign/{key}", Body=data)
    return bucket


def s3_inputs(endpoint: str) -> dict:
    return {"accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": endpoint,
            "defaultRegion": "us-east-1", "enabled": True}


async def item_count(app) -> int:
    async with app.state.readpool.acquire() as conn:
        return await conn.fetchval("SELECT count(*) FROM pgstac.items")


@pytest.mark.slow
async def test_publish_end_to_end(app, alice_processes, alice_data, admin_data, anon,
                                  s3_endpoint, user_data, published_collections,
                                  tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    catalog = unique("campaign-")
    assert (await alice_data.post("/data/catalogs", json={
        "id": catalog, "type": "Catalog", "description": "my campaign"})).status_code == 201
    inputs = {"source": f"s3://{user_data}/campaign", "catalog": catalog,
              "s3": s3_inputs(s3_endpoint), "display": {"friendlyName": "Campaign 2023"},
              "resources": {"limits": {"memory": "2Gi", "cpu": "1"}}}
    result = await publish(alice_processes, inputs)

    published = {i["collection"]: i for i in result["created"]}
    assert set(published) == {"climate_forecast-sea_surface_temperature",
                              "climate_forecast-air_temperature"}
    # eastward wind has no collection yet: its item waits in the collection's proposal,
    # which an administrator accepts
    [wind] = result["held"]
    assert (wind["collection"], result["collectionsCreated"]) == (
        "climate_forecast-eastward_wind", [])
    r = await admin_data.post(f"{wind['proposal']}/accept", json={"reason": "Wind data."})
    assert (r.status_code, r.json()["released_items"]) == (200, 1)
    published[wind["collection"]] = {
        **wind, "url": f"http://testserver/data/collections/{wind['collection']}/items/"
                       f"{wind['id']}"}
    assert {(s["variable"], s["reason"]) for s in result["skipped"]} == {
        ("flag", "no CF standard_name")}
    warned = {w["file"].rsplit("/", 1)[1] for w in result["warnings"]}
    assert warned == {"readings.csv", "broken.nc"}
    sst = await check_published_items(anon, published, user_data)

    tree = (await anon.get(f"/data/catalogs/{catalog}")).json()
    linked = {link["href"] for link in tree["links"] if link["rel"] == "item"}
    assert linked == {i["url"] for i in published.values()}  # the released one too

    # idempotent: the same call updates the same items
    before = await item_count(app)
    rerun = await publish(alice_processes, inputs)
    assert not rerun["created"] and not rerun["held"]
    assert {i["id"] for i in rerun["updated"]} == {i["id"] for i in published.values()}
    assert await item_count(app) == before

    await check_example_opens_the_data(anon, sst, s3_endpoint, tmp_path)

    # the credentials went to the S3 client only
    async with app.state.readpool.acquire() as conn:
        stored = str(await conn.fetch("SELECT j::text FROM processes.jobs j"))
        items = str(await conn.fetch("SELECT content::text FROM pgstac.items"))
    for place in (stored, items, caplog.text, str(result), str(sst)):
        assert SECRET not in place


async def test_publish_private_items(alice_processes, alice_data, anon, s3_endpoint,
                                    user_data, published_collections) -> None:
    """`visibility: private`: the items are alice's to read; `project` needs the job's
    project (a job of none is refused when submitted, saying so: nothing written)."""
    inputs = {"source": f"s3://{user_data}/campaign/sst.nc", "s3": s3_inputs(s3_endpoint),
              "visibility": "project"}
    r = await execute(alice_processes, "publish-dataset", inputs)
    assert (r.status_code, r.json()["detail"]) == (400, (
        "visibility: project shares the results with the job's project: name one of yours "
        "in metadata.project.")), r.text
    result = await publish(alice_processes, {**inputs, "visibility": "private"})
    [item] = result["created"]
    assert (await anon.get(item["url"])).status_code == 404
    r = await alice_data.get(item["url"])
    assert (r.status_code, r.json()["properties"]["visibility"]) == (200, "private")


async def test_publish_into_catalogs_of_mine_no_one_else_reads(
        app, alice_processes, issuer: TestIssuer, s3_endpoint, user_data,
        published_collections) -> None:
    """alice's private catalog, and one of her project's (the job in that project): the
    submission's check reads them as she does (it read them as no one: "not one of yours",
    400), and the items are linked into them."""
    async with http_client(app, issuer.token("alice", groups=["ocean-lab"])) as alice_data:
        mine, ours = unique("mine-"), unique("ours-")
        for body in ({"id": mine, "visibility": "private"},
                     {"id": ours, "visibility": "project", "project": "ocean-lab"}):
            r = await alice_data.post("/data/catalogs", json={
                **body, "type": "Catalog", "description": "not public"})
            assert r.status_code == 201, r.text
        for catalog, project in ((mine, None), (ours, "ocean-lab")):
            inputs = {"source": f"s3://{user_data}/campaign/sst.nc", "catalog": catalog,
                      "s3": s3_inputs(s3_endpoint), "visibility": "private"}
            metadata = {"metadata": {"project": project}} if project else {}
            r = await execute(alice_processes, "publish-dataset", inputs, **metadata)
            assert r.status_code == 201, r.text
            job = await wait_for(alice_processes, r.headers["Location"], "successful",
                                 "failed", seconds=120)
            assert job["status"] == "successful", job["message"]
            tree = (await alice_data.get(f"/data/catalogs/{catalog}")).json()
            assert [link["rel"] for link in tree["links"]].count("item") == 1, tree
        # a path through `..` reads as hers over HTTP; the publisher refuses it: so now
        # does the submission
        r = await execute(alice_processes, "publish-dataset", {
            "source": f"s3://{user_data}/campaign/sst.nc", "catalog": f"elsewhere/../{mine}"})
        assert (r.status_code, r.json()["detail"]) == (400, (
            f"catalog: The target catalog elsewhere/../{mine} is not one of yours: items can "
            "only be linked into a catalog you own, or one of the job's project.")), r.text


async def publish(client: httpx.AsyncClient, inputs: dict) -> dict:
    """Run publish-dataset to success; its results."""
    r = await execute(client, "publish-dataset", inputs)
    assert r.status_code == 201, r.text
    job = await wait_for(client, r.headers["Location"], "successful", "failed", seconds=120)
    assert job["status"] == "successful", job["message"]
    return (await client.get(f"{r.headers['Location']}/results")).json()


async def check_published_items(anon: httpx.AsyncClient, published: dict,
                                user_data: str) -> dict:
    """The items as anyone reads them back; the sea surface temperature one."""
    sst = (await anon.get(published["climate_forecast-sea_surface_temperature"]["url"])).json()
    assert sst["properties"]["owner"] == "alice"
    assert sst["bbox"] == [-10.0, 40.0, -7.0, 42.0]
    assert sst["properties"]["start_datetime"].startswith("2023-06-01")
    assert sst["properties"]["end_datetime"].startswith("2023-06-02")
    assert sst["properties"]["cube:variables"]["sst"]["unit"] == "K"
    assert sst["properties"]["cube:dimensions"]["lon"]["extent"] == [-10.0, -7.0]
    assert sst["assets"]["data"] == {"href": f"s3://{user_data}/campaign/sst.nc",
                                     "type": "application/netcdf", "title": "sst.nc",
                                     "roles": ["data"]}
    assert any("datacube" in uri for uri in sst["stac_extensions"])
    wind = (await anon.get(published["climate_forecast-eastward_wind"]["url"])).json()
    assert wind["assets"]["data"]["type"] == "application/vnd+zarr"
    assert wind["properties"]["datetime"].startswith("2023-07-01")
    stations = (await anon.get(published["climate_forecast-air_temperature"]["url"])).json()
    assert stations["bbox"] == [5.0, 45.0, 6.0, 46.5]
    assert stations["properties"]["table:row_count"] == 2
    # each its quicklook, which the API draws and serves as it serves the item
    for item in (sst, wind, stations):
        assert item["assets"]["thumbnail"] == {
            "href": f"http://testserver/data/collections/{item['collection']}/items/"
                    f"{item['id']}/thumbnail.png",
            "type": "image/png", "title": "Quicklook", "roles": ["thumbnail"]}
    return sst


async def check_example_opens_the_data(anon: httpx.AsyncClient, item: dict,
                                       s3_endpoint: str, tmp_path: Path) -> None:
    """The generated example opens the data from the same S3 endpoint."""
    [example] = [link for link in item["links"] if link["rel"] == "example"]
    script = tmp_path / "example.py"
    script.write_text((await anon.get(example["href"])).text)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "AWS_ACCESS_KEY_ID": KEY_ID,
                                           "AWS_SECRET_ACCESS_KEY": SECRET,
                                           "AWS_ENDPOINT_URL": s3_endpoint,
                                           "AWS_DEFAULT_REGION": "us-east-1"})
    assert out.returncode == 0, out.stderr
    assert "sst" in out.stdout


@pytest.mark.parametrize("case", ["unreachable", "empty", "not my catalog", "no catalog"])
async def test_publish_failures_write_nothing(app, alice_processes, bob_data, s3_endpoint,
                                              user_data, case: str) -> None:
    source = f"s3://{user_data}/campaign"
    s3 = s3_inputs(s3_endpoint)
    inputs: dict = {"source": source, "s3": s3}
    if case == "unreachable":
        s3["endpoint"] = f"http://127.0.0.1:{free_port()}"
    elif case == "empty":
        inputs["source"] = f"s3://{user_data}/nothing-here"
    else:  # bob's private catalog answers as one that does not exist
        other = unique("bobs-")
        if case == "not my catalog":
            assert (await bob_data.post("/data/catalogs", json={
                "id": other, "type": "Catalog", "description": "not alice's",
                "visibility": "private"})).status_code == 201
        inputs["catalog"] = other
    before = await item_count(app)
    r = await execute(alice_processes, "publish-dataset", inputs)
    if case in ("not my catalog", "no catalog"):  # refused when submitted: no job
        assert (r.status_code, r.json()["detail"]) == (400, (
            f"catalog: The target catalog {other} is not one of yours: items can only "
            "be linked into a catalog you own, or one of the job's project.")), r.text
        assert await item_count(app) == before
        return
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed",
                         seconds=120)
    assert job["status"] == "failed"
    expected = {"unreachable": "Cannot reach the object storage",
                "empty": "No object under"}[case]
    assert expected in job["message"], job["message"]
    assert SECRET not in job["message"]
    assert await item_count(app) == before


@pytest.mark.parametrize("source", ["https://user:s3cret@example.org/sst.nc",
                                    "s3://key:s3cret@bucket/campaign"])
async def test_a_source_with_a_password_is_refused(alice_processes, source: str) -> None:
    """The job's record and every published asset would keep it: a 400 at submission."""
    r = await execute(alice_processes, "publish-dataset", {"source": source})
    assert (r.status_code, r.json()["detail"]) == (400, (
        "processInputs do not match the process's inputs schema: source: is not in the form "
        "expected (s3://bucket/prefix, or an https URL of one file; without a user name or "
        "password)")), r.text


async def test_publish_with_wrong_keys(app, alice_processes, secured_s3) -> None:
    _, wrong = secured_s3
    before = await item_count(app)
    r = await execute(alice_processes, "publish-dataset",
                      {"source": "s3://secured/data", "s3": wrong})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed",
                         seconds=120)
    assert job["status"] == "failed"
    assert "refused access" in job["message"] and "wrong-secret" not in job["message"]
    assert await item_count(app) == before


def test_published_urls_follow_the_prefix_path() -> None:
    """Item URLs in the results are the data API's, wherever `PREFIX_PATH` puts it."""
    result: dict = {"created": [], "updated": [], "held": [], "skipped": [],
                    "collectionsCreated": []}
    outcome = Outcome(created=[("climate_forecast-x", "a b")],
                      updated=[("climate_forecast-x", "c")])
    report(result, outcome, api_root("https://svc.example/geo/", "/stac"), "s3://b/f.nc")
    assert result["created"] == [{
        "id": "a b", "collection": "climate_forecast-x", "file": "s3://b/f.nc",
        "url": "https://svc.example/geo/stac/collections/climate_forecast-x/items/a%20b"}]
    assert result["updated"][0]["url"] == \
        "https://svc.example/geo/stac/collections/climate_forecast-x/items/c"
    assert api_root("/", "/data") == "/data/"
