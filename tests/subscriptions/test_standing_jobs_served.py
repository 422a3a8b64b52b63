"""Standing jobs in the product as an operator runs it: `geocatalog serve --workers 2` (each
of its processes matching, and submitting and following runs) and a separate `geocatalog
worker` running the jobs, on a fresh migrated database, driven over HTTP with real tokens.
Alice's subscription runs her deployed time mean (CDO) on each window of two new sea
surface temperature items in a real S3 server, as her; each job reads exactly its window's
items and publishes its mean with `derived_from` links to them; her subscription's runs log
shows them; the windows given again, and a window's submission taken up after its
submitter stopped, make no second job."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from stac_ext.publish.demo_files import sst_monthly
from stac_ext.settings import Settings
from tests.support.cluster import migrated_database
from tests.support.cwl import CWL_YAML, cdo_mean
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT, TestIssuer
from tests.support.product import Product, running
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import SST, make_collection, make_item

pytestmark = pytest.mark.slow



@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return migrated_database(database_url, "standing_served_")


@pytest.fixture(scope="module")
def product(settings: Settings, database: str,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Product]:
    """Two API processes (two dispatchers) and one job worker."""
    with running(settings, tmp_path_factory.mktemp("standing-served"), database_url=database,
                 workers=1, api_workers=2, SUBSCRIPTIONS_POLL_SECONDS="0.1") as started:
        yield started


def until(check: Callable[[], Any]) -> Any:
    """`check()`'s first true answer (the harness bounds the wait)."""
    while not (found := check()):
        time.sleep(0.2)
    return found


def test_a_standing_job_runs_once_per_window_in_the_served_product(
        product: Product, issuer: TestIssuer, s3_endpoint: str, database: str) -> None:
    run = uuid.uuid4().hex[:8]
    bucket = f"served-{run}"
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    process = f"sst-mean-{run}"
    with product.client(issuer.token("root", rights=[ADMIN_RIGHT])) as admin, \
            product.client(issuer.token("alice")) as data, \
            product.client(issuer.token("alice", client=PROCESS_CLIENT,
                                        rights=["deployProcess"])) as processes:
        r = admin.post("/data/collections", json=make_collection(SST))
        assert r.status_code == 201, r.text
        r = processes.post("/processes/processes", content=cdo_mean(process),
                           headers=CWL_YAML)
        assert r.status_code == 201, r.text

        s3_section = {"accessKeyId": KEY_ID, "secretAccessKey": SECRET,
                      "endpoint": s3_endpoint, "defaultRegion": "us-east-1"}
        job = {"process": process, "itemsInput": "files", "inputs": {"s3": s3_section},
               "publish": {"visibility": "private"}, "window": {"items": 2}}
        r = data.post("/data/subscriptions", json={
            "title": "Monthly means", "search": {"collections": [SST]}, "job": job})
        assert r.status_code == 201, r.text
        subscription = r.json()
        url = f"{product.base}/data/subscriptions/{subscription['id']}"
        assert r.headers["Location"] == url
        # her secret is kept sealed: never shown again
        shown_job = {**job, "inputs": {"s3": {**s3_section, "secretAccessKey": "***"}},
                     "retries": 0}
        assert subscription == {
            "id": subscription["id"], "title": "Monthly means", "owner": "alice",
            "search": {"collections": [SST]}, "kinds": ["created", "updated", "deleted"],
            "webhook": None, "status": "active", "pausedReason": None, "events": 0,
            "created": subscription["created"], "updated": subscription["created"],
            "job": shown_job, "links": [
                {"rel": "self", "href": url, "type": "application/json"},
                {"rel": "events", "href": f"{url}/events", "type": "application/json",
                 "title": "Its events (the feed), from a cursor"},
                {"rel": "describedby", "href": f"{product.base}/data/subscriptions/asyncapi",
                 "type": "application/asyncapi+json", "title": "The channels (AsyncAPI)"},
                {"rel": "runs", "href": f"{url}/runs", "type": "application/json",
                 "title": "Its standing job's runs"}]}

        # four months arrive: two windows of two
        urls = {}
        for key, body in sst_monthly():
            s3.put_object(Bucket=bucket, Key=key, Body=body)
            item = make_item(f"{run}-{key.removesuffix('.nc')}", data=f"s3://{bucket}/{key}")
            item["assets"]["data"]["type"] = "application/x-netcdf"
            r = data.post(f"/data/collections/{SST}/items", json=item)
            assert r.status_code == 201, r.text
            urls[key] = r.headers["Location"]
        windows = {1: {urls["sst-2021-01.nc"], urls["sst-2021-02.nc"]},
                   2: {urls["sst-2021-03.nc"], urls["sst-2022-01.nc"]}}

        def runs_log() -> list[dict[str, Any]]:
            r = data.get(f"{url}/runs")
            assert r.status_code == 200, r.text
            return list(r.json()["runs"])

        def ended() -> list[dict[str, Any]] | None:
            runs = runs_log()
            done = [r for r in runs if r["status"] in ("successful", "failed")]
            return runs if len(done) == 2 else None

        # her subscription's log shows each window's run, newest first
        runs = until(ended)
        assert [{k: v for k, v in r.items() if k not in ("opened", "closed")}
                for r in runs] == [
            {"window": window, "status": "successful", "closes": None, "items": 2,
             "attempts": 1, "nextTry": None, "message": None, "jobs": ran["jobs"],
             "job": f"{product.base}/processes/jobs/{ran['jobs'][0]}"}
            for window, ran in zip((2, 1), runs, strict=True)], runs
        assert all(len(r["jobs"]) == 1 and r["opened"] and r["closed"] for r in runs)
        published: dict[int, str] = {}
        for ran in runs:
            window = ran["window"]
            r = processes.get(ran["job"])
            assert r.status_code == 200, r.text
            assert (r.json()["status"], r.json()["owner"], r.json()["processID"]) == (
                "successful", "alice", process)
            # it read exactly its window's items
            r = processes.get(f"{ran['job']}/prov")
            assert r.status_code == 200, r.text
            assert {e["geocatalog:item"] for name, e in r.json()["entity"].items()
                    if name.startswith("job:inputs/")} == windows[window]
            # its mean published (private, hers) with its lineage
            r = processes.get(f"{ran['job']}/results")
            assert r.status_code == 200, r.text
            [published[window]] = r.json()["mean"]["items"]
            r = data.get(published[window])
            assert r.status_code == 200, r.text
            mean = r.json()
            assert (mean["properties"]["owner"], mean["properties"]["visibility"]) == (
                "alice", "private")
            assert {link["href"] for link in mean["links"]
                    if link["rel"] == "derived_from"} == windows[window]
            assert {link["href"] for link in mean["links"] if link["rel"] == "related"} == {
                ran["job"]}

        # the means match her search too: announced (matching fills the windows in the
        # same transaction), never processed again
        def announced() -> list[dict[str, Any]] | None:
            r = data.get(f"{url}/events")
            assert r.status_code == 200, r.text
            events = r.json()["events"]
            return events if len(events) == 6 else None

        events = until(announced)
        assert [(e["type"], e["data"]["links"][0]["href"]) for e in events[:4]] == [
            ("org.geocatalog.item.created", urls[key]) for key in sorted(urls)]
        assert {(e["type"], e["data"]["links"][0]["href"]) for e in events[4:]} == {
            ("org.geocatalog.item.created", href) for href in published.values()}
        assert runs_log() == runs
        r = data.get(url)
        assert r.status_code == 200, r.text
        assert (r.json()["events"], r.json()["job"]) == (6, shown_job)

        # the same events given to the windows again, and a window's submission taken up
        # after its submitter stopped (the run left `submitting`, its job unrecorded), with
        # both API processes looking: no new job
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute("SELECT subscriptions.fill_windows(%s, 0)", (subscription["id"],))
            assert runs_log() == runs
            conn.execute("UPDATE subscriptions.runs SET status = 'submitting', jobs = '{}', "
                         "job_id = NULL, job_url = NULL, "
                         "claimed = now() - interval '1 hour' "
                         "WHERE subscription_id = %s AND number = 1", (subscription["id"],))

        def taken_up() -> list[dict[str, Any]] | None:
            again = runs_log()
            return again if again[1]["status"] not in ("submitting", "submitted") else None

        assert until(taken_up) == runs
        r = processes.get("/processes/jobs", params={"processID": process})
        assert r.status_code == 200, r.text
        assert sorted(j["jobID"] for j in r.json()["jobs"]) == sorted(
            ran["jobs"][0] for ran in runs)
