"""The loop from the catalog to a job and back, as a person sees it in a browser: the job's
page lists its result files (one in her storage, one to download from the service) and
links the item its NetCDF became; that item's page in STAC Browser shows what it was
derived from, the job that made it and its provenance, each opening in a new tab signed in
(the service's session), where the job is dismissed, once confirmed."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, expect

from process_api import HAS_PROVENANCE
from stac_ext.publish.demo_files import sst_monthly
from stac_ext.settings import Settings
from tests.support.browser import BROWSER_TESTS, chromium
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.cwl import cdo_mean
from tests.support.http import free_port, signing_in_locally
from tests.support.paths import ROOT
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import make_collection

SST = "climate_forecast-sea_surface_temperature"
SHOTS = ROOT / ".artifacts" / "web"

pytestmark = BROWSER_TESTS


def ended(base: str, job: str, token: str) -> dict:
    """The job once it has ended (bounded; not a timing assertion)."""
    deadline = time.monotonic() + 180
    while True:
        found = httpx.get(job, headers={"Authorization": f"Bearer {token}"}).json()
        if found["status"] in ("successful", "failed") or time.monotonic() > deadline:
            return found
        time.sleep(0.3)


def run(base: str, token: str, process: str, inputs: dict) -> str:
    r = httpx.post(f"{base}/processes/processes/{process}/execution",
                   json={"processInputs": inputs}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 201, r.text
    job = r.headers["Location"]
    assert ended(base, job, token)["status"] == "successful", ended(base, job, token)
    return job


@pytest.fixture(scope="module")
def finished_job(settings: Settings, s3_endpoint: str, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[tuple[str, str]]:
    """A service (a worker, the local issuer) where alice published monthly SST from her
    storage, deployed CDO's mean and ran it on 2021's months, her NetCDF published into
    her catalog; the base URL and the job's id."""
    url = new_database(settings.database_url or "", "loopweb_")
    assert run_cli("migrate", env={"DATABASE_URL": url}).returncode == 0
    s3 = s3_client(s3_endpoint)
    bucket = f"web-{free_port()}"
    s3.create_bucket(Bucket=bucket)
    for key, data in sst_monthly():
        s3.put_object(Bucket=bucket, Key=f"sst/{key}", Body=data)
    storage = {"accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": s3_endpoint,
               "defaultRegion": "us-east-1"}
    with signing_in_locally(settings, tmp_path_factory.mktemp("loop-web"), DATABASE_URL=url,
                            IN_PROCESS_WORKER="true",
                            OUTBOUND_ALLOW="127.0.0.0/8") as (base, issuer):
        jobs = issuer.mint("alice", settings.process_client_id, rights=["deployProcess"])
        data = issuer.mint("alice", settings.data_client_id)
        # the collection she publishes into, made as an administrator does
        admin = issuer.mint("root", settings.data_client_id, rights=[settings.admin_right])
        r = httpx.post(f"{base}/data/collections", json=make_collection(SST),
                       headers={"Authorization": f"Bearer {admin}"})
        assert r.status_code == 201, r.text
        run(base, jobs, "publish-dataset", {"source": f"s3://{bucket}/sst", "s3": storage})
        r = httpx.post(f"{base}/data/catalogs", headers={"Authorization": f"Bearer {data}"},
                       json={"id": "means", "type": "Catalog", "description": "My means"})
        assert r.status_code == 201, r.text
        r = httpx.post(f"{base}/processes/processes", content=cdo_mean("sst-mean"),
                       headers={"Authorization": f"Bearer {jobs}",
                                "Content-Type": "application/cwl+yaml"},
                       timeout=120)  # its package is checked in a process of its own
        assert r.status_code == 201, r.text
        job = run(base, jobs, "sst-mean", {
            "files": [{"href": f"{base}/data/search?collections={SST}&datetime="
                               "2021-01-01T00:00:00Z/2021-12-31T23:59:59Z&limit=2"}],
            "s3": storage, "results": {"prefix": f"s3://{bucket}/results"},
            "publish": {"catalog": "means", "visibility": "public"}})
        yield base, job.rsplit("/", 1)[1]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def test_the_job_page_and_the_item_it_made(finished_job, browser: Browser) -> None:
    base, job = finished_job
    page = browser.new_page()
    page.route("**/*", lambda route: route.continue_()
               if route.request.url.startswith((base, "data:", "blob:")) else route.abort())
    page.goto(f"{base}/processes/jobs/{job}", wait_until="networkidle")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("DEVELOPMENT ONLY.")).to_be_visible()
    page.get_by_label("User name").fill("alice")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as alice")).to_be_visible()
    results = page.locator("#results")
    expect(results).to_be_visible()
    expect(results.locator(".result-file strong")).to_have_text("mean.nc")
    expect(results.locator(".result-href")).to_have_text(
        json.loads(page.locator("#results-json").text_content() or "{}")["mean"]["href"])
    # the item it became, in STAC Browser: derived from the three months of 2021, made by the job
    results.locator(".result-item").click()
    page.wait_for_url(f"{base}/browser/**")
    expect(page.get_by_text("Derived from", exact=False).first).to_be_visible(timeout=30000)
    derived = page.locator("a", has_text="sst-2021-0")
    expect(derived).to_have_count(3)
    expect(page.get_by_text("The job that made this item")).to_be_visible()
    # the provenance link's section, in words
    expect(page.get_by_role("heading", name="Provenance", exact=True)).to_be_visible()
    expect(page.get_by_text(HAS_PROVENANCE)).to_have_count(0)

    # its provenance, in a new tab: signed in there too, the page in words
    with page.context.expect_page() as opened:
        page.get_by_text("The job's provenance (W3C PROV)").click()
    prov = opened.value
    prov.wait_for_load_state()
    assert urlsplit(prov.url).path == f"/processes/jobs/{job}/prov"
    for _ in range(2):  # and again after a reload
        expect(prov.get_by_role("heading", name=f"Provenance of job {job}")).to_be_visible()
        expect(prov.locator("#signed-in-as")).to_have_text("Signed in as alice")
        expect(prov.locator("#provenance-summary")).to_contain_text(
            "alice ran the process sst-mean (revision 1)")
        inputs = prov.locator("#provenance-inputs tbody tr")
        expect(inputs).to_have_count(3)
        for row in inputs.all():
            expect(row).to_contain_text(re.compile(r"sst-2021-0\d"))
            expect(row.locator(".checksum")).to_have_text(re.compile(r"^sha256:[0-9a-f]{64}$"))
        expect(prov.locator("#provenance-outputs")).to_contain_text("mean.nc")
        expect(prov.locator("#provenance-published li")).to_have_count(1)
        prov.reload()
    prov.screenshot(path=SHOTS / "provenance.png", full_page=True)
    assert "eyJ" not in prov.content()  # no token in the page
    prov.close()

    # the job that made it, in a new tab: the job, not "Sign in to see this job"
    with page.context.expect_page() as opened:
        page.get_by_text("The job that made this item").click()
    made = opened.value
    made.wait_for_load_state()
    expect(made.locator("#job-status")).to_have_text("successful")
    expect(made.locator("#job-process")).to_have_text("sst-mean")
    expect(made.get_by_text("Sign in to see this job.")).to_be_hidden()
    expect(made.locator("#job-progress")).to_have_attribute("value", "100")
    expect(made.locator("#job-provenance")).to_be_visible()
    # dismissed from its page, once confirmed: the item it made stays
    made.get_by_role("button", name="Dismiss").click()
    expect(made.locator("#dismiss-question")).to_contain_text(
        "Items published from them and files in your own storage stay.")
    made.get_by_role("button", name="Keep it").click()
    expect(made.locator("#dismiss-confirm")).to_be_hidden()
    expect(made.locator("#job-status")).to_have_text("successful")
    made.get_by_role("button", name="Dismiss").click()
    made.get_by_role("button", name="Dismiss the job").click()
    expect(made.locator("#job-status")).to_have_text("dismissed")
    expect(made.locator("#results")).to_be_hidden()
    made.close()
    page.reload()
    expect(page.get_by_text("Derived from", exact=False).first).to_be_visible(timeout=30000)
    page.close()
