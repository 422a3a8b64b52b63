"""A job's files in the explorer: before they are published, for whoever the process API
lets read them (the job's owner, not others); once published as an item, for whoever reads
the item, with the item's quicklook drawn from the file, kept for everyone who reads it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import numpy as np
import pytest
import xarray as xr

from stac_ext.publish.demo_files import netcdf_bytes
from tests.support.cwl import CWL_YAML, cdo_mean
from tests.support.issuer import PROCESS_CLIENT, TestIssuer
from tests.support.jobs import execute, wait_for
from tests.support.s3 import KEY_ID, SECRET, s3_client


@pytest.fixture
async def service(service_app, issuer: TestIssuer, published_collections
                  ) -> AsyncIterator[dict]:
    """The service with a worker; alice (deploys, process and data tokens), bob, anyone;
    the collections publishing writes into made."""
    tokens = {"alice": issuer.token("alice", client=PROCESS_CLIENT, rights=["deployProcess"]),
              "alice_data": issuer.token("alice"),
              "bob": issuer.token("bob", client=PROCESS_CLIENT)}
    async with service_app(job_queue=f"explore-{uuid.uuid4().hex[:8]}", in_process_worker=True,
                           explorer_url_template=None) as started:
        made = {name: started.client(token) for name, token in tokens.items()}
        made["anyone"] = started.client()
        yield made


@pytest.mark.slow
async def test_a_jobs_netcdf_explored_before_and_after_publishing(service, s3_endpoint
                                                                  ) -> None:
    alice, bob, anyone = service["alice"], service["bob"], service["anyone"]
    run = uuid.uuid4().hex[:8]
    bucket, process = f"job-files-{run}", f"sst-mean-{run}"
    s3_client(s3_endpoint).create_bucket(Bucket=bucket)
    s3_client(s3_endpoint).put_object(Bucket=bucket, Key="sst.nc", Body=netcdf_bytes())
    assert (await alice.post("/processes/processes", content=cdo_mean(process),
                             headers=CWL_YAML)).status_code == 201
    s3 = {"accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": s3_endpoint,
          "defaultRegion": "us-east-1"}
    expected = xr.open_dataset(__import__("io").BytesIO(netcdf_bytes()), engine="h5netcdf")
    mean = expected["sst"].mean("time")

    # its file, in the service's results store, before publishing: alice's only
    r = await execute(alice, process, {"files": [{"href": f"s3://{bucket}/sst.nc"}],
                                       "s3": s3})
    url = r.headers["Location"]
    job = await wait_for(alice, url, "successful", "failed", seconds=120)
    assert job["status"] == "successful", job.get("message")
    href = (await alice.get(f"{url}/results")).json()["mean"]["href"]
    r = await alice.get("/explore/info", params={"source": href})
    assert r.status_code == 200, r.text
    assert {v["name"] for v in r.json()["variables"]} == {"sst", "flag", "time_bnds"}  # CDO
    found = (await alice.get("/explore/map", params={"source": href, "variable": "sst"})).json()
    assert (found["min"], found["max"]) == (float(mean.min()), float(mean.max()))
    for other in (bob, anyone):
        r = await other.get("/explore/info", params={"source": href})
        assert (r.status_code, r.json()["description"]) == (
            404, "mean.nc is not a job's file you may read.")
    # anything but a job's file of this service is explored under its item
    r = await alice.get("/explore/info", params={"source": f"s3://{bucket}/sst.nc"})
    assert r.status_code == 400

    # published publicly: anyone who reads the item explores it, and sees its quicklook
    r = await execute(alice, process, {"files": [{"href": f"s3://{bucket}/sst.nc"}],
                                       "s3": s3, "publish": {"visibility": "public"}})
    url = r.headers["Location"]
    job = await wait_for(alice, url, "successful", "failed", seconds=120)
    assert job["status"] == "successful", job.get("message")
    result = (await alice.get(f"{url}/results")).json()["mean"]
    item_url = result["items"][0].removeprefix("http://testserver")
    item = (await anyone.get(item_url)).json()
    assert item["assets"]["thumbnail"] == {
        "href": f"http://testserver{item_url}/thumbnail.png", "type": "image/png",
        "title": "Quicklook", "roles": ["thumbnail"]}
    for reader in (anyone, service["alice_data"]):
        r = await reader.get(f"{item_url}/explore/map", params={"source": result["href"]})
        assert r.status_code == 200, r.text
        assert r.json()["min"] == float(np.nanmin(mean.values))
    picture = await anyone.get(f"{item_url}/thumbnail.png")
    assert (picture.status_code, picture.content[:4]) == (200, b"\x89PNG")
