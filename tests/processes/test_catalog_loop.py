"""From the catalog to a job and back, end to end on the real engine, a real S3 server and
a real tool (CDO): alice finds monthly sea surface temperature by free text, runs a
deployed CDO process on those items as a collection input, and its result is stored in her
storage and published into her catalog with its lineage and provenance. And what must fail,
failing clearly with nothing staged or written."""

from __future__ import annotations

import hashlib
import json
import re
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from prov.model import ProvDocument
from rocrate.rocrate import ROCrate

from stac_ext.publish.demo_files import netcdf_bytes, sst_monthly
from tests.support.cwl import cdo_mean, python_tool
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT, TestIssuer
from tests.support.jobs import execute, wait_for
from tests.support.s3 import KEY_ID, SECRET, s3_client, secured_s3_server
from tests.support.stac import make_collection, make_item

SST = "climate_forecast-sea_surface_temperature"
CWL_YAML = {"Content-Type": "application/cwl+yaml"}
OGC = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/"


def s3_section(endpoint: str) -> dict:
    return {"accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": endpoint,
            "defaultRegion": "us-east-1"}


@pytest.fixture
async def loop_service(service_app, issuer: TestIssuer, published_collections
                       ) -> AsyncIterator[dict]:
    """The service with a worker, staging at most 40 KiB and 8 files per job (three
    months' files fit, six demo NetCDFs do not); clients: alice (deploys, in ocean-lab),
    bob, anonymous, each with a data and a process token, and an administrator."""
    clients = {
        "alice": issuer.token("alice", client=PROCESS_CLIENT, groups=["ocean-lab"],
                              rights=["deployProcess"]),
        "alice_data": issuer.token("alice", groups=["ocean-lab"]),
        "bob": issuer.token("bob", client=PROCESS_CLIENT),
        "bob_data": issuer.token("bob"),
        "admin_data": issuer.token("root", rights=[ADMIN_RIGHT]),
    }
    async with service_app(job_queue=f"loop-{uuid.uuid4().hex[:8]}", in_process_worker=True,
                           job_stage_bytes="40Ki", job_stage_files=8) as service:
        yield {**{name: service.client(token) for name, token in clients.items()},
               "anonymous": service.client()}


async def published(client: httpx.AsyncClient, inputs: dict) -> dict:
    r = await execute(client, "publish-dataset", inputs)
    assert r.status_code == 201, r.text
    job = await wait_for(client, r.headers["Location"], "successful", "failed", seconds=180)
    assert job["status"] == "successful", job.get("message")
    return (await client.get(f"{r.headers['Location']}/results")).json()


@pytest.mark.slow
async def test_from_the_catalog_to_a_job_and_back(loop_service, s3_endpoint,
                                                  tmp_path: Path) -> None:
    alice, alice_data = loop_service["alice"], loop_service["alice_data"]
    run = uuid.uuid4().hex[:8]
    bucket = f"alice-{run}"
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    files = dict(sst_monthly())
    for key, data in files.items():
        s3.put_object(Bucket=bucket, Key=f"sst/{key}", Body=data)
    # her monthly files in the catalog, private to her
    result = await published(alice, {
        "source": f"s3://{bucket}/sst", "visibility": "private",
        "s3": s3_section(s3_endpoint), "display": {"friendlyName": f"Campaign {run}"}})
    months = {i["file"].rsplit("/", 1)[1]: i["url"] for i in result["created"]}
    assert set(months) == set(files)

    # 1. she finds the sea surface temperature of 2021 by free text
    query = {"q": "sea surface temperature",
             "datetime": "2021-01-01T00:00:00Z/2021-12-31T23:59:59Z",
             "filter": {"op": "like", "args": [{"property": "title"}, f"%{run}%"]},
             "filter-lang": "cql2-json"}
    found = (await alice_data.post("/data/search", json={
        "collections": [SST], "limit": 100, **{**query, "q": [query["q"]]}})).json()
    inputs_2021 = {months[f"sst-2021-0{m}.nc"] for m in (1, 2, 3)}
    assert {f"http://testserver/data/collections/{SST}/items/{i['id']}"
            for i in found["features"]} == inputs_2021

    # 2. she deploys CDO's time mean, and runs it on those items, publishing privately
    catalog = f"results-{run}"
    assert (await alice_data.post("/data/catalogs", json={
        "id": catalog, "type": "Catalog", "description": "my results"})).status_code == 201
    process = f"sst-mean-{run}"
    r = await alice.post("/processes/processes", content=cdo_mean(process), headers=CWL_YAML)
    assert r.status_code == 201, r.text
    r = await execute(alice, process, {
        "files": [{"collection": f"http://testserver/data/collections/{SST}", **query}],
        "s3": s3_section(s3_endpoint), "results": {"prefix": f"s3://{bucket}/results"},
        "publish": {"catalog": catalog}})
    assert r.status_code == 201, r.text
    url = r.headers["Location"]
    job_id = url.rsplit("/", 1)[1]

    # 3. it succeeds; the NetCDF is in her storage at the documented path, and downloads
    job = await wait_for(alice, url, "successful", "failed", seconds=180)
    assert job["status"] == "successful", job.get("message")
    results = (await alice.get(f"{url}/results")).json()
    mean = results["mean"]
    key = f"results/{job_id}/mean/mean.nc"
    assert mean["href"] == f"s3://{bucket}/{key}"
    assert (mean["basename"], mean["type"]) == ("mean.nc", "application/netcdf")
    stored = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    assert (mean["size"], mean["checksum"]) == (
        len(stored), "1220" + hashlib.sha256(stored).hexdigest())

    # 4. a new item of the collection, with its lineage
    assert len(mean["items"]) == 1
    item = (await alice_data.get(mean["items"][0].removeprefix("http://testserver"))).json()
    assert item["collection"] == SST
    assert item["assets"]["data"]["href"] == mean["href"]
    properties = item["properties"]
    assert properties["visibility"] == "private"
    assert properties["processing:software"] == {process: "1.0.0 (revision 1)"}
    assert properties["processing:lineage"].startswith(f"Made by the process {process}")
    assert "processing:datetime" in properties
    assert any(e.endswith("/processing/v1.2.0/schema.json") for e in item["stac_extensions"])
    links = item["links"]
    assert {link["href"] for link in links if link["rel"] == "derived_from"} == inputs_2021
    assert {"rel": "related", "href": url} in [
        {k: link[k] for k in ("rel", "href")} for link in links]
    assert f"{url}/prov" in {link["href"] for link in links}
    tree = (await alice_data.get(f"/data/catalogs/{catalog}")).json()
    assert mean["items"][0] in {link["href"] for link in tree["links"] if link["rel"] == "item"}

    # 5. the provenance lists each input's checksum, and PROV reads it
    r = await alice.get(f"{url}/prov")
    assert r.status_code == 200
    document = ProvDocument.deserialize(content=r.text, format="json")
    assert len(document.get_records()) > 0
    prov = r.json()
    read = {e["prov:location"]: e for name, e in prov["entity"].items()
            if name.startswith("job:inputs/")}
    assert set(read) == {f"s3://{bucket}/sst/sst-2021-0{m}.nc" for m in (1, 2, 3)}
    for href, entity in read.items():
        data = files[href.rsplit("/", 1)[1]]
        assert entity["geocatalog:checksum"] == "1220" + hashlib.sha256(data).hexdigest()
    assert {e["geocatalog:item"] for e in read.values()} == inputs_2021
    # the same as a Workflow Run RO-Crate, which ro-crate-py reads
    r = await alice.get(f"{url}/prov", headers={"Accept": "application/ld+json"})
    assert r.headers["content-type"].startswith("application/ld+json")
    (tmp_path / "ro-crate-metadata.json").write_text(r.text)
    crate = ROCrate(tmp_path)
    assert crate.mainEntity.id == f"http://testserver/processes/processes/{process}/package"
    action = next(e for e in crate.get_entities() if e.type == "CreateAction")
    assert {f.id for f in action["object"]} == set(read)
    assert [f.id for f in action["result"]] == [mean["href"]]
    assert action["result"][0]["sha256"] == mean["checksum"].removeprefix("1220")

    # 6. bob and anonymous do not see the new item
    item_path = mean["items"][0].removeprefix("http://testserver")
    for other in (loop_service["bob_data"], loop_service["anonymous"]):
        assert (await other.get(item_path)).status_code == 404

    # dismissing the job leaves the item and her file
    assert (await alice.delete(url)).status_code == 200
    assert (await alice_data.get(item_path)).status_code == 200
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == stored


async def jobs_of(client: httpx.AsyncClient, process: str) -> int:
    r = await client.get("/processes/jobs", params={"processID": process})
    return len(r.json()["jobs"])


@pytest.mark.slow
async def test_what_a_job_cannot_read_fails_clearly(loop_service, s3_endpoint) -> None:
    alice, bob = loop_service["alice"], loop_service["bob"]
    run = uuid.uuid4().hex[:8]
    bucket = f"data-{run}"
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    for n in range(6):
        s3.put_object(Bucket=bucket, Key=f"a/sst-{n}.nc", Body=netcdf_bytes())
    process = f"sst-mean-{run}"
    r = await alice.post("/processes/processes", content=cdo_mean(process), headers=CWL_YAML)
    assert r.status_code == 201, r.text
    # bob's private item
    result = await published(bob, {"source": f"s3://{bucket}/a/sst-0.nc",
                                   "visibility": "private", "s3": s3_section(s3_endpoint)})
    bobs = result["created"][0]["url"]

    # alice naming bob's private item: 404 at submission, no job
    r = await execute(alice, process, {"files": [{"href": bobs}]})
    assert r.status_code == 404, r.text
    assert r.json()["type"] == OGC + "no-such-input"
    assert "does not exist" in r.json()["detail"]
    assert await jobs_of(alice, process) == 0

    # over the job's bytes: six files of 9 KiB against 40 KiB; nothing written
    r = await execute(alice, process, {
        "files": [{"href": f"s3://{bucket}/a/sst-{n}.nc"} for n in range(6)],
        "s3": s3_section(s3_endpoint), "results": {"prefix": f"s3://{bucket}/out"}})
    assert r.status_code == 201, r.text
    job = await wait_for(alice, r.headers["Location"], "successful", "failed", seconds=120)
    assert job["status"] == "failed"
    assert re.fullmatch(r"Stage-in stopped: the job's inputs are more than 40Ki "
                        rf"\(JOB_STAGE_BYTES\), at s3://{bucket}/a/sst-\d\.nc\.",
                        job["message"]), job["message"]
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="out")

    # an asset whose storage refuses the keys
    with secured_s3_server("secured", {"x/sst.nc": netcdf_bytes()}) as (_, keys):
        wrong = {**keys, "secretAccessKey": "wrong-secret"}
        r = await execute(alice, process, {"files": [{"href": "s3://secured/x/sst.nc"}],
                                           "s3": wrong})
        job = await wait_for(alice, r.headers["Location"], "successful", "failed",
                             seconds=120)
    assert job["status"] == "failed"
    assert job["message"] == ("The object storage refused access to s3://secured/x/sst.nc: "
                              "check s3.accessKeyId and s3.secretAccessKey (and sessionToken).")
    assert "entity" not in (await alice.get(f"{r.headers['Location']}/prov")).json()


SANDBOXED_READER = """
    import glob, json, os, socket, stat, sys
    path, port = sys.argv[1], int(sys.argv[2])
    def attempt(action):
        try:
            action()
            return "ok"
        except OSError as e:
            return type(e).__name__
    def write():
        with open(path, "ab") as f:
            f.write(b"x")
    def seen(secret):  # in what another process holds open, or in its environment
        found = []
        for place in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/fd/*"):
            if place.startswith(f"/proc/{os.getpid()}/"):
                continue
            try:
                if not stat.S_ISREG(os.stat(place).st_mode):  # a pipe would block
                    continue
                with open(place, "rb") as f:
                    if secret in f.read(1 << 20):
                        found.append(place)
            except OSError:
                pass
        return found
    print(json.dumps({"size": os.path.getsize(path), "write": attempt(write),
                      "keys": seen("yek-terces-tset"[::-1].encode()),
                      "interfaces": [name for _, name in socket.if_nameindex()],
                      "storage": attempt(lambda: socket.create_connection(("127.0.0.1", port), 2)),
                      "outside": attempt(lambda: socket.create_connection(("192.0.2.1", 80), 2))}))
"""


@pytest.mark.slow
async def test_staged_data_in_a_sandbox_without_network(loop_service, s3_endpoint) -> None:
    """The worker stages the data in; the job reads it, read-only, and still reaches no
    address (not even the storage it came from), nor sees the storage's keys (in no
    process's environment or open file). Its file goes to the service's results store,
    read through the API by whoever may read the job, and gone with the job."""
    alice = loop_service["alice"]
    run = uuid.uuid4().hex[:8]
    bucket = f"net-{run}"
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    data = netcdf_bytes()
    s3.put_object(Bucket=bucket, Key="sst.nc", Body=data)
    process = f"reader-{run}"
    r = await alice.post("/processes/processes", headers=CWL_YAML, content=python_tool(
        process, SANDBOXED_READER, {"data": "File", "port": "int"}, {"report": "stdout"}))
    assert r.status_code == 201, r.text
    port = int(s3_endpoint.rsplit(":", 1)[1])
    r = await execute(alice, process, {"data": {"href": f"s3://{bucket}/sst.nc"},
                                       "port": port, "s3": s3_section(s3_endpoint)})
    url = r.headers["Location"]
    job = await wait_for(alice, url, "successful", "failed", seconds=120)
    assert job["status"] == "successful", job.get("message")
    report = (await alice.get(f"{url}/results")).json()["report"]
    # its own loopback (nothing listens on it), and no other interface
    assert SECRET == "test-secret-key"  # what the script looks for, reversed in its text
    assert json.loads(report["contents"]) == {
        "size": len(data), "write": "OSError", "keys": [], "interfaces": ["lo"],
        "storage": "ConnectionRefusedError", "outside": "OSError"}
    job_id = url.rsplit("/", 1)[1]
    assert report["href"] == f"{url}/files/report/{report['basename']}"
    path = report["href"].removeprefix("http://testserver")
    got = await alice.get(path)
    assert (got.status_code, got.content.decode()) == (200, report["contents"])
    assert got.headers["content-type"].startswith(report["type"])
    r = await loop_service["bob"].get(path)
    assert (r.status_code, r.json()["detail"]) == (
        404, f"The job {job_id} has no file report/{report['basename']}.")
    r = await loop_service["anonymous"].get(path)  # asked for a token, as any job address
    assert (r.status_code, r.headers["www-authenticate"], r.json()["detail"]) == (
        401, "Bearer", "Authentication required: no token.")
    assert (await alice.delete(url)).status_code == 200
    assert (await alice.get(path)).status_code == 404


async def test_references_that_cannot_be_read_are_refused_at_submission(
        loop_service, s3_endpoint) -> None:
    """Each a 400 (or 404) naming the input, and no job."""
    alice = loop_service["alice"]
    run = uuid.uuid4().hex[:8]
    single = f"one-{run}"
    r = await alice.post("/processes/processes", headers=CWL_YAML, content=python_tool(
        single, "print(1)", {"data": "File"}, {"report": "stdout"}))
    assert r.status_code == 201, r.text
    many = f"many-{run}"
    assert (await alice.post("/processes/processes", content=cdo_mean(many),
                             headers=CWL_YAML)).status_code == 201
    name = f"loop-{run}"
    r = await loop_service["admin_data"].post("/data/collections", json=make_collection(name))
    assert r.status_code == 201, r.text
    collection = f"http://testserver/data/collections/{name}"
    for n in range(2):  # two items of hers, each with one data asset
        item = make_item(f"two-{run}-{n}", day=n + 1, data=f"s3://b/{run}-{n}.nc")
        item["properties"]["title"] = f"Two {run}"
        r = await loop_service["alice_data"].post(f"/data/collections/{name}/items", json=item)
        assert r.status_code == 201, r.text
    mine = {"op": "=", "args": [{"property": "title"}, f"Two {run}"]}
    # a Zarr store among an item's assets: the job was made, then its staging said the
    # store "does not exist" (a folder of objects, read as one)
    store = make_item(f"store-{run}", data=f"s3://b/{run}.zarr")
    store["assets"]["data"]["type"] = "application/vnd+zarr"
    r = await loop_service["alice_data"].post(f"/data/collections/{name}/items", json=store)
    assert r.status_code == 201, r.text
    cases = [
        (single, {"data": {"href": f"{collection}/items/store-{run}", "assets": ["data"]}},
         400, rf"processInputs\.data: s3://b/{run}\.zarr is a Zarr store, a folder of "
              r"objects, and a file input takes files: choose another of the item's assets "
              r"with `assets`\."),
        (single, {"data": {"collection": collection, "filter": mine}}, 400,
         r"processInputs\.data: the reference gives 2 files, and the input takes one "
         r"\(an array input takes many\)\."),
        (single, {"data": {"href": "http://testserver/data/conformance"}}, 400,
         r"processInputs\.data: not an item, a collection or a search of this catalog"),
        (single, {"data": {"collection": "https://elsewhere.example/collections/x"}}, 400,
         r"processInputs\.data: a collection input names a collection of this catalog\."),
        (single, {"data": {"href": f"{collection}/items/nothing-{run}"}}, 404,
         rf"processInputs\.data: Item nothing-{run} in Collection {name} does not exist\."),
        (single, {"data": {"collection": "http://testserver/data/collections/none"}}, 404,
         r"processInputs\.data: Collection none does not exist\."),
        (single, {"data": {"href": "http://testserver/data/collections/none/items/x"}}, 404,
         r"processInputs\.data: Collection none does not exist\."),
        (many, {"files": [{"href": f"s3://b/{n}.nc"} for n in range(9)]}, 400,
         r"processInputs\.files\[8\]: the references give more than 8 files, the most one "
         r"job reads \(JOB_STAGE_FILES\)\."),
        (single, {"data": {"href": "ftp://example.org/x.nc"}}, 400,
         r"processInputs do not match the process's inputs schema: data/href: is not in "
         r"the form expected \(an http\(s\) or s3:// URL\)"),
    ]
    for process, inputs, status, detail in cases:
        r = await execute(alice, process, inputs)
        assert r.status_code == status, (inputs, r.text)
        assert re.fullmatch(detail, r.json()["detail"]), r.json()["detail"]
    assert await jobs_of(alice, single) == 0 and await jobs_of(alice, many) == 0

    # a package's input may not take a name of the job's own sections
    for name in ("s3", "results", "publish", "resources"):
        r = await alice.post("/processes/processes", headers=CWL_YAML, content=python_tool(
            f"named-{run}", "print(1)", {name: "string"}, {}))
        assert r.status_code == 400
        assert r.json()["detail"].startswith(f"inputs.{name}: the name is the job's own")


async def cdo_and_a_file(alice: httpx.AsyncClient, s3_endpoint: str
                         ) -> tuple[str, str, str]:
    """A run's mark, a bucket of its own holding a NetCDF at `sst.nc`, and the CDO mean
    deployed by alice: (run, bucket, process id)."""
    run = uuid.uuid4().hex[:8]
    bucket, process = f"file-{run}", f"sst-mean-{run}"
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="sst.nc", Body=netcdf_bytes())
    assert (await alice.post("/processes/processes", content=cdo_mean(process),
                             headers=CWL_YAML)).status_code == 201
    return run, bucket, process


@pytest.mark.slow
async def test_publishing_into_a_catalog_not_yours_is_refused_at_submission(
        loop_service, s3_endpoint) -> None:
    """bob's catalog, or none: the job ran to its end, then failed publishing (422). Now
    the submission is refused (400) in the publisher's words, no job made; a missing
    catalog and another's are told alike (a private catalog's existence is not told)."""
    alice, bob_data = loop_service["alice"], loop_service["bob_data"]
    run, bucket, process = await cdo_and_a_file(alice, s3_endpoint)
    assert (await bob_data.post("/data/catalogs", json={
        "id": f"bobs-{run}", "type": "Catalog", "description": "bob's"})).status_code == 201
    for target in (f"bobs-{run}", f"nobodys-{run}/nada"):
        r = await execute(alice, process, {
            "files": [{"href": f"s3://{bucket}/sst.nc"}], "s3": s3_section(s3_endpoint),
            "results": {"prefix": f"s3://{bucket}/out"}, "publish": {"catalog": target}})
        assert (r.status_code, r.json()["detail"]) == (400, (
            f"publish.catalog: The target catalog {target} is not one of yours: items can "
            "only be linked into a catalog you own, or one of the job's project.")), r.text
    assert await jobs_of(alice, process) == 0


@pytest.mark.slow
async def test_a_published_file_of_the_service_store_outlives_its_job(
        loop_service, s3_endpoint) -> None:
    """Without a storage of hers the NetCDF goes to the service's results store; published
    publicly, anyone who reads the item reads its file, and dismissing the job keeps it
    (an unpublished file goes with the job: the sandbox test). The item is then a later
    job's input (its worker fetched the file over HTTP, as no one: "does not exist")."""
    alice, anonymous = loop_service["alice"], loop_service["anonymous"]
    _, bucket, process = await cdo_and_a_file(alice, s3_endpoint)
    r = await execute(alice, process, {"files": [{"href": f"s3://{bucket}/sst.nc"}],
                                       "s3": s3_section(s3_endpoint),
                                       "publish": {"visibility": "public"}})
    url = r.headers["Location"]
    job = await wait_for(alice, url, "successful", "failed", seconds=120)
    assert job["status"] == "successful", job.get("message")
    mean = (await alice.get(f"{url}/results")).json()["mean"]
    assert mean["href"] == f"{url}/files/mean/mean.nc"
    item = (await anonymous.get(mean["items"][0].removeprefix("http://testserver"))).json()
    assert item["assets"]["data"]["href"] == mean["href"]
    assert item["properties"]["visibility"] == "public"
    assert "derived_from" not in {link["rel"] for link in item["links"]}  # a file's URL
    path = mean["href"].removeprefix("http://testserver")
    first = await anonymous.get(path)
    assert (first.status_code, len(first.content)) == (200, mean["size"])
    prov = await alice.get(f"{url}/prov")
    assert prov.status_code == 200, prov.text
    assert (await alice.delete(url)).status_code == 200
    for reader in (alice, anonymous):
        again = await reader.get(path)
        assert (again.status_code, again.content) == (200, first.content)
    # its provenance too, which the item links (the job itself is gone, as OGC says)
    assert (await alice.get(url)).status_code == 404
    again = await alice.get(f"{url}/prov")
    assert again.status_code == 200, again.text
    before, after = prov.json(), again.json()
    assert after["activity"]["job:run"].pop("geocatalog:status") == "dismissed"
    assert before["activity"]["job:run"].pop("geocatalog:status") == "successful"
    assert after == before
    has_provenance = next(link["href"] for link in item["links"]
                          if link["rel"].endswith("has_provenance"))
    assert has_provenance == f"{url}/prov"
    assert (await loop_service["bob"].get(f"{url}/prov")).status_code == 404

    # the item, a later job's input, its job dismissed: its file read from the store
    sizer = f"size-{uuid.uuid4().hex[:8]}"
    r = await alice.post("/processes/processes", headers=CWL_YAML, content=python_tool(
        sizer, "import os, sys\nopen('n.txt', 'w').write(str(os.path.getsize(sys.argv[1])))",
        {"data": "File"}, {"n": "{type: string, outputBinding: {glob: n.txt, loadContents: "
                                "true, outputEval: '$(self[0].contents)'}}"}))
    assert r.status_code == 201, r.text
    r = await execute(alice, sizer, {"data": {"href": mean["items"][0]}})
    assert r.status_code == 201, r.text
    job = await wait_for(alice, r.headers["Location"], "successful", "failed", seconds=120)
    assert job["status"] == "successful", job.get("message")
    assert (await alice.get(f"{r.headers['Location']}/results")).json() == {
        "n": str(mean["size"])}


@pytest.mark.slow
async def test_a_result_is_published_no_wider_than_its_inputs(loop_service,
                                                             s3_endpoint) -> None:
    """A public result of a private input showed anonymous readers its derived_from link,
    the private item's URL and id."""
    alice = loop_service["alice"]
    _, bucket, process = await cdo_and_a_file(alice, s3_endpoint)
    private = (await published(alice, {"source": f"s3://{bucket}/sst.nc",
                                       "visibility": "private",
                                       "s3": s3_section(s3_endpoint)}))["created"][0]["url"]
    for visibility, project in (("public", None), ("project", "ocean-lab")):
        r = await execute(alice, process, {
            "files": [{"href": private}], "s3": s3_section(s3_endpoint),
            "publish": {"visibility": visibility}},
            **({"metadata": {"project": project}} if project else {}))
        assert (r.status_code, r.json()["detail"]) == (
            400, f"publish.visibility: {visibility} would show the result to readers who may "
                 f"not read its input {private} (private): publish it no wider than its "
                 "inputs."), r.text
    # items for a project need the job's project: refused now, not once the job has run
    r = await execute(alice, process, {"files": [{"href": private}],
                                       "s3": s3_section(s3_endpoint),
                                       "publish": {"visibility": "project"}})
    assert (r.status_code, r.json()["detail"]) == (
        400, "publish.visibility: project shares the results with the job's project: name "
             "one of yours in metadata.project."), r.text
    r = await execute(alice, process, {"files": [{"href": private}],
                                       "s3": s3_section(s3_endpoint),
                                       "publish": {"visibility": "private"}})
    assert r.status_code == 201, r.text
    assert (await alice.delete(r.headers["Location"])).status_code == 200


@pytest.mark.slow
async def test_a_collection_input_takes_cql2_text(loop_service, s3_endpoint) -> None:
    """`filter-lang: cql2-text` answered 400 "Input should be a valid dictionary"."""
    alice, alice_data = loop_service["alice"], loop_service["alice_data"]
    _, bucket, process = await cdo_and_a_file(alice, s3_endpoint)
    item = (await published(alice, {"source": f"s3://{bucket}/sst.nc",
                                    "s3": s3_section(s3_endpoint)}))["created"][0]
    r = await execute(alice, process, {
        "files": [{"collection": f"http://testserver/data/collections/{item['collection']}",
                   "filter": f"id = '{item['id']}'", "filter-lang": "cql2-text"}],
        "s3": s3_section(s3_endpoint)})
    assert r.status_code == 201, r.text
    job = await wait_for(alice, r.headers["Location"], "successful", "failed", seconds=120)
    assert job["status"] == "successful", job.get("message")
    prov = (await alice.get(f"{r.headers['Location']}/prov")).json()
    assert [e["geocatalog:item"] for name, e in prov["entity"].items()
            if name.startswith("job:inputs/")] == [item["url"]]
    assert (await alice_data.get("/data/search")).status_code == 200


@pytest.mark.slow
async def test_an_assets_relative_href_is_read_against_its_item(loop_service) -> None:
    """An item asset with a relative href was staged as it was (`sst.nc`), and refused."""
    alice, admin = loop_service["alice"], loop_service["admin_data"]
    collection = f"test_conv-relative_{uuid.uuid4().hex[:8]}"
    assert (await admin.post("/data/collections",
                             json=make_collection(collection))).status_code == 201
    item = make_item("relative")
    item["assets"] = {"data": {"href": "../data/sst.nc", "roles": ["data"],
                               "type": "application/x-netcdf"}}
    assert (await loop_service["alice_data"].post(f"/data/collections/{collection}/items",
                                                  json=item)).status_code == 201
    process = f"size-{uuid.uuid4().hex[:8]}"
    assert (await alice.post("/processes/processes", headers=CWL_YAML, content=python_tool(
        process, "import os, sys\nprint(os.path.getsize(sys.argv[1]))",
        {"data": "File"}, {"size": "stdout"}))).status_code == 201
    url = f"http://testserver/data/collections/{collection}/items/relative"
    r = await execute(alice, process, {"data": {"href": url}})
    assert r.status_code == 201, r.text
    job = await wait_for(alice, r.headers["Location"], "successful", "failed", seconds=120)
    # the item's own address gives the file's: this test's service is in-process, so its
    # host name leads nowhere the worker may fetch from
    resolved = f"http://testserver/data/collections/{collection}/data/sst.nc"
    assert (job["status"], job["message"]) == ("failed", (
        f"{resolved}: The address cannot be reached from here: give a public http(s) or S3 "
        "address (the service's OUTBOUND_ALLOW names the private networks it may reach)."))


def global_tos(with_time: bool = True) -> bytes:
    """A global sea surface temperature on 0..360 longitudes, as CDO's `-const,290,r36x18`
    writes it (without its time coordinate: a file that cannot become an item)."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    lon = ("lon", np.arange(0.0, 360.0, 10.0), {"units": "degrees_east",
                                                 "standard_name": "longitude"})
    lat = ("lat", np.arange(-85.0, 90.0, 10.0), {"units": "degrees_north",
                                                  "standard_name": "latitude"})
    attrs = {"standard_name": "sea_surface_temperature", "units": "K"}
    if with_time:
        ds = xr.Dataset({"tos": (("time", "lat", "lon"), np.full((1, 18, 36), 290.0), attrs)},
                        coords={"time": pd.to_datetime(["2024-01-01"]), "lat": lat,
                                "lon": lon})
    else:
        ds = xr.Dataset({"tos": (("lat", "lon"), np.full((18, 36), 290.0), attrs)},
                        coords={"lat": lat, "lon": lon})
    return bytes(ds.to_netcdf(engine="h5netcdf"))


@pytest.mark.slow
async def test_publishing_says_what_it_did_not_publish_and_takes_global_grids(
        loop_service, s3_endpoint) -> None:
    """A global grid on 0..360 longitudes became "no latitude/longitude extent" (west 0,
    east -10), and its job ended successful with no item and no word of it; a published
    private item's asset answered 403 to its owner's data token ("This API needs a token
    issued to the client 'geocatalog-processes'")."""
    alice = loop_service["alice"]
    run = uuid.uuid4().hex[:8]
    bucket = f"grids-{run}"
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="tos.nc", Body=global_tos())
    s3.put_object(Bucket=bucket, Key="timeless.nc", Body=global_tos(with_time=False))
    process = f"copy-{run}"
    assert (await alice.post("/processes/processes", headers=CWL_YAML, content=python_tool(
        process, "import shutil, sys\nshutil.copy(sys.argv[1], 'out.nc')",
        {"data": "File"}, {"grid": "{type: File, outputBinding: {glob: out.nc}}"}))
            ).status_code == 201
    outcomes = {}
    for name in ("tos.nc", "timeless.nc"):
        r = await execute(alice, process, {"data": {"href": f"s3://{bucket}/{name}"},
                                           "s3": s3_section(s3_endpoint),
                                           "publish": {"visibility": "private"}})
        url = r.headers["Location"]
        job = await wait_for(alice, url, "successful", "failed", seconds=120)
        outcomes[name] = job, (await alice.get(f"{url}/results")).json()["grid"]
    job, grid = outcomes["tos.nc"]
    assert (job["status"], job["message"]) == ("successful", "finished")
    item = (await loop_service["alice_data"].get(
        grid["items"][0].removeprefix("http://testserver"))).json()
    assert item["bbox"] == [-180.0, -85.0, 180.0, 85.0]
    # the private item's asset, read with the token that reads the item (a data token: what
    # STAC Browser and pystac-client send), as with hers for jobs; by nobody else
    asset = item["assets"]["data"]["href"].removeprefix("http://testserver")
    for reader, status in (("alice_data", 200), ("alice", 200), ("bob_data", 404),
                           ("bob", 404), ("anonymous", 401)):
        r = await loop_service[reader].get(asset)
        assert r.status_code == status, (reader, r.text)
        if status == 200:
            assert len(r.content) == grid["size"]
    job, grid = outcomes["timeless.nc"]
    reason = "tos: no time coordinate (an item needs a datetime)"
    assert (job["status"], job["message"]) == (
        "successful", f"finished; not published: out.nc ({reason})")
    assert (grid.get("items"), grid["unpublished"]) == (None, [reason])


@pytest.mark.slow
async def test_a_pages_address_pasted_as_an_input_is_what_the_page_shows(
        loop_service, s3_endpoint) -> None:
    """The item's address copied from STAC Browser's bar (`/browser/collections/.../items/
    ...`) was taken as a file's URL: the worker fetched STAC Browser's index.html, and CDO
    said "Unsupported file type"."""
    alice = loop_service["alice"]
    _, bucket, process = await cdo_and_a_file(alice, s3_endpoint)
    item = (await published(alice, {"source": f"s3://{bucket}/sst.nc",
                                    "s3": s3_section(s3_endpoint)}))["created"][0]
    page = f"http://testserver/browser/collections/{item['collection']}/items/{item['id']}"
    search = (f"http://testserver/ui/search?q=&collections={item['collection']}"
              f"&ids={item['id']}&datetime=2023&limit=10")  # a year, as the page takes it
    for reference in ({"href": page}, {"href": search}):
        r = await execute(alice, process, {"files": [reference],
                                           "s3": s3_section(s3_endpoint)})
        assert r.status_code == 201, r.text
        url = r.headers["Location"]
        job = await wait_for(alice, url, "successful", "failed", seconds=120)
        assert job["status"] == "successful", job.get("message")
        prov = (await alice.get(f"{url}/prov")).json()
        read = [e["geocatalog:item"] for name, e in prov["entity"].items()
                if name.startswith("job:inputs/")]
        assert item["url"] in read, (reference, read)


@pytest.mark.slow
async def test_an_object_storage_that_does_not_answer_is_said_so(loop_service,
                                                                 s3_endpoint) -> None:
    """An s3:// input whose storage did not answer failed with "could not be read
    (EndpointConnectionError)" alone: no word of where it was read."""
    alice = loop_service["alice"]
    _, bucket, process = await cdo_and_a_file(alice, s3_endpoint)
    with socket.socket() as closed:  # a port nothing listens on, once closed
        closed.bind(("127.0.0.1", 0))
        silent = f"http://127.0.0.1:{closed.getsockname()[1]}"
    r = await execute(alice, process, {"files": [{"href": f"s3://{bucket}/sst.nc"}],
                                       "s3": s3_section(silent)})
    assert r.status_code == 201, r.text
    job = await wait_for(alice, r.headers["Location"], "successful", "failed", seconds=120)
    assert (job["status"], job["message"]) == ("failed", (
        f"s3://{bucket}/sst.nc could not be read: its object storage did not answer "
        "(EndpointConnectionError). An s3:// file is read at the job's s3.endpoint, AWS's "
        "when it names none."))
