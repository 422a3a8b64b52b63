"""Standing jobs, end to end on the real engine, a real S3 server and a real tool (CDO):
alice's subscription runs her deployed time mean on each window of two new sea surface
temperature items, as her (her S3 credentials sealed in the subscription), each job on
exactly its window's items, its result published with `derived_from` links to them; the
same window given again, or taken up after its submitter stopped, makes no second job."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
import pytest

from stac_ext.publish.demo_files import sst_monthly
from tests.support.cluster import migrated_database
from tests.support.cwl import CWL_YAML, cdo_mean
from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT, TestIssuer
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import SST, make_collection, make_item


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return migrated_database(database_url, "standing_")


@pytest.fixture(scope="module")
async def service(service_app, database: str) -> AsyncIterator[Any]:
    """The service with its job worker and its dispatcher, on a database of its own."""
    async with service_app(database=database, in_process_worker=True,
                           subscriptions_poll_seconds=0.1) as started:
        yield started.app


@pytest.fixture
async def clients(service, issuer: TestIssuer) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    made = {"data": http_client(service, issuer.token("alice")),
            "processes": http_client(service, issuer.token(
                "alice", client=PROCESS_CLIENT, rights=["deployProcess"])),
            "admin": http_client(service, issuer.token("root", rights=[ADMIN_RIGHT]))}
    try:
        yield made
    finally:
        for client in made.values():
            await client.aclose()


async def until(check: Any, seconds: float = 240) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := await check()):
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.5)
    return found


@pytest.mark.slow
async def test_a_standing_job_runs_once_per_window_on_exactly_its_new_items(
        clients, s3_endpoint, database) -> None:
    data, processes = clients["data"], clients["processes"]
    run = uuid.uuid4().hex[:8]
    bucket = f"standing-{run}"
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    await clients["admin"].post("/data/collections", json=make_collection(SST))  # or 409
    process = f"sst-mean-{run}"
    r = await processes.post("/processes/processes", content=cdo_mean(process),
                             headers=CWL_YAML)
    assert r.status_code == 201, r.text

    s3_section = {"accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": s3_endpoint,
                  "defaultRegion": "us-east-1"}
    r = await data.post("/data/subscriptions", json={
        # the means it publishes match too: they are announced, never processed again
        "title": "Monthly means", "search": {"collections": [SST]},
        "job": {"process": process, "itemsInput": "files", "inputs": {"s3": s3_section},
                "publish": {"visibility": "private"}, "window": {"items": 2}}})
    assert r.status_code == 201, r.text
    subscription = r.json()
    # her secret is kept sealed: never shown again, never stored in clear
    assert subscription["job"]["inputs"]["s3"]["secretAccessKey"] == "***"
    with psycopg.connect(database) as conn:
        stored = conn.execute("SELECT job::text, job_secrets FROM subscriptions.subscriptions "
                              "WHERE id = %s", (subscription["id"],)).fetchone()
    assert stored is not None and SECRET not in stored[0] and SECRET not in stored[1]

    # four months arrive: two windows of two
    months = dict(sst_monthly())
    urls = {}
    for key, body in months.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)
        item = make_item(f"{run}-{key.removesuffix('.nc')}", data=f"s3://{bucket}/{key}")
        item["assets"]["data"]["type"] = "application/x-netcdf"
        r = await data.post(f"/data/collections/{SST}/items", json=item)
        assert r.status_code == 201, r.text
        urls[key] = r.headers["Location"]
    first = {urls["sst-2021-01.nc"], urls["sst-2021-02.nc"]}
    second = {urls["sst-2021-03.nc"], urls["sst-2022-01.nc"]}
    runs_url = f"/data/subscriptions/{subscription['id']}/runs"

    async def ended() -> list[dict] | None:
        runs = (await data.get(runs_url)).json()["runs"]
        done = [r for r in runs if r["status"] in ("successful", "failed")]
        return runs if len(done) == 2 else None

    runs = await until(ended)
    assert [(r["window"], r["status"], r["items"], r["attempts"]) for r in runs] == [
        (2, "successful", 2, 1), (1, "successful", 2, 1)], [  # a failure says why
        (r["window"], r["status"], r.get("message"), r.get("job")) for r in runs]
    for window, items in ((1, first), (2, second)):
        ran = next(r for r in runs if r["window"] == window)
        job_url = ran["job"]
        job = (await processes.get(job_url.removeprefix("http://testserver"))).json()
        assert (job["status"], job["owner"], job["processID"]) == (
            "successful", "alice", process)
        # it read exactly its window's items
        prov = (await processes.get(job_url.removeprefix("http://testserver") + "/prov")
                ).json()
        read = {e["geocatalog:item"] for name, e in prov["entity"].items()
                if name.startswith("job:inputs/")}
        assert read == items
    # their results published (private, hers) with their lineage, and not taken again
    results = [(await processes.get(r["job"].removeprefix("http://testserver") + "/results")
                ).json() for r in runs]
    assert all(len(result["mean"]["items"]) == 1 for result in results)
    for ran, result in zip(runs, results, strict=True):
        published = (await data.get(result["mean"]["items"][0].removeprefix(
            "http://testserver"))).json()
        assert {link["href"] for link in published["links"]
                if link["rel"] == "derived_from"} == (first if ran["window"] == 1 else second)

    await asyncio.sleep(2)
    assert len((await data.get(runs_url)).json()["runs"]) == 2  # the means opened none
    feed = (await data.get(f"/data/subscriptions/{subscription['id']}/events")).json()
    assert len(feed["events"]) == 6  # four months, two means

    # the same events given to the windows again, and a window's submission taken up after
    # its submitter stopped (the run left `submitting`, its job unrecorded): no new job
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SELECT subscriptions.fill_windows(%s, 0)", (subscription["id"],))
        conn.execute("UPDATE subscriptions.runs SET status = 'submitting', jobs = '{}', "
                     "job_id = NULL, claimed = now() - interval '1 hour' "
                     "WHERE subscription_id = %s AND number = 1", (subscription["id"],))
    first_job = next(r for r in runs if r["window"] == 1)["jobs"][0]

    async def taken_up() -> list[dict] | None:
        runs = (await data.get(runs_url)).json()["runs"]
        return runs if runs[-1]["status"] == "successful" else None

    again = await until(taken_up, 60)
    assert [(r["window"], r["jobs"]) for r in again] == [
        (2, runs[0]["jobs"]), (1, [first_job])]
    jobs = (await processes.get("/processes/jobs", params={"processID": process})).json()
    assert len(jobs["jobs"]) == 2


async def test_a_process_id_no_address_holds_is_refused_in_words(clients) -> None:
    """A control character in `job.process` was a 500: its address could not be made."""
    r = await clients["data"].post("/data/subscriptions", json={
        "search": {}, "job": {"window": {"items": 1}, "process": "mean\x7f",
                              "itemsInput": "files"}})
    assert (r.status_code, r.json()) == (400, {
        "code": "BadRequest", "description": "job.process: There is no process 'mean\\x7f'."})


async def test_a_standing_job_for_a_project_not_the_owners_is_refused_when_saved(
        clients) -> None:
    """alice (in no project) saved a standing job sharing its runs with ocean-lab: 201,
    then every window failed ("not a member"). Now the save is the 403 a job's would be,
    and nothing is saved."""
    data = clients["data"]
    before = (await data.get("/data/subscriptions")).json()
    r = await data.post("/data/subscriptions", json={
        "search": {}, "job": {"window": {"items": 1}, "process": "echo",
                              "itemsInput": "files", "project": "ocean-lab"}})
    assert (r.status_code, r.json()) == (403, {
        "code": "Forbidden", "description": "You are not a member of the project "
        "'ocean-lab': only its members share jobs with it."})
    assert (await data.get("/data/subscriptions")).json() == before


async def test_a_standing_jobs_publish_section_is_checked_when_saved(clients) -> None:
    """Publishing for a project without one, or into a catalog not hers, was saved (201),
    then failed at every window; refused now, as a job's submission is."""
    data = clients["data"]
    before = (await data.get("/data/subscriptions")).json()
    for publish, detail in (
            ({"visibility": "project"},
             "job.publish.visibility: project shares the results with the job's project: "
             "name one of yours in job.project."),
            ({"catalog": "nope/nada"},
             "job.publish.catalog: The target catalog nope/nada is not one of yours: items "
             "can only be linked into a catalog you own, or one of the job's project.")):
        r = await data.post("/data/subscriptions", json={
            "search": {}, "job": {"window": {"items": 1}, "process": "echo",
                                  "itemsInput": "files", "publish": publish}})
        assert (r.status_code, r.json()) == (400, {"code": "BadRequest",
                                                   "description": detail})
    assert (await data.get("/data/subscriptions")).json() == before


async def test_a_standing_job_publishes_into_a_private_catalog_of_its_owner(clients) -> None:
    """alice's own private catalog: the save's check reads it as she does (it read it as no
    one: "not one of yours", 400)."""
    data, run = clients["data"], uuid.uuid4().hex[:8]
    process, catalog = f"sst-mean-{run}", f"mine-{run}"
    await clients["admin"].post("/data/collections", json=make_collection(SST))  # or 409
    r = await clients["processes"].post("/processes/processes", content=cdo_mean(process),
                                        headers=CWL_YAML)
    assert r.status_code == 201, r.text
    r = await data.post("/data/catalogs", json={
        "id": catalog, "type": "Catalog", "description": "mine", "visibility": "private"})
    assert r.status_code == 201, r.text
    r = await data.post("/data/subscriptions", json={
        "search": {"collections": [SST]}, "job": {
            "window": {"items": 1}, "process": process, "itemsInput": "files",
            "publish": {"catalog": catalog, "visibility": "private"}}})
    assert r.status_code == 201, r.text
    assert r.json()["job"]["publish"] == {"catalog": catalog, "visibility": "private"}
