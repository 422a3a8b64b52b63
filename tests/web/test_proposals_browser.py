"""A variable proposed and decided in a browser (Debian's Chromium): alice proposes sea ice
thickness from the proposals page, publishes a file of it (its item waits in her proposal,
shown to her there), an administrator accepts it on the same page, and the item shows in
search."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.publish.demo_files import variable_netcdf
from stac_ext.settings import Settings
from tests.support.browser import BROWSER_TESTS, chromium
from tests.support.cluster import migrated_database
from tests.support.http import signing_in_locally
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import unique

pytestmark = BROWSER_TESTS


@pytest.fixture(scope="module")
def service(settings: Settings, database_url: str, s3_endpoint: str,
            tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[str, LocalIssuer, str]]:
    """A service with the local issuer and a job worker; a bucket holding alice's NetCDF of
    sea ice thickness."""
    url = migrated_database(database_url, "proposalsweb_")
    bucket = unique("ice-web-")
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="ice/thickness.nc",
                  Body=variable_netcdf("sea_ice_thickness", "sit", "m"))
    with signing_in_locally(settings, tmp_path_factory.mktemp("proposals-web"),
                            DATABASE_URL=url, IN_PROCESS_WORKER="true",
                            OUTBOUND_ALLOW="127.0.0.0/8") as (base, issuer):
        yield base, issuer, bucket


def sign_in(page: Page, user: str, rights: str = "") -> None:
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("DEVELOPMENT ONLY.")).to_be_visible()
    page.get_by_label("User name").fill(user)
    page.get_by_label("Rights").fill(rights)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {user}")).to_be_visible()


def publish(base: str, token: str, inputs: dict) -> dict:
    """publish-dataset run to its end, as alice's program would; its results."""
    headers = {"Authorization": f"Bearer {token}"}
    r = httpx.post(f"{base}/processes/processes/publish-dataset/execution", headers=headers,
                   json={"processInputs": inputs})
    assert r.status_code == 201, r.text
    job = r.headers["Location"]
    for _ in range(600):  # bounded: a minute at most
        status = httpx.get(job, headers=headers).json()["status"]
        if status in ("successful", "failed"):
            break
        time.sleep(0.1)
    assert status == "successful", httpx.get(job, headers=headers).json()
    return httpx.get(f"{job}/results", headers=headers).json()


def test_proposed_on_the_page_accepted_on_the_page_then_found(
        service, settings: Settings, s3_endpoint: str) -> None:
    base, issuer, bucket = service
    with chromium() as browser:
        page = browser.new_page()
        page.route("**/*", lambda route: route.continue_()
                   if route.request.url.startswith((base, "data:")) else route.abort())
        page.goto(f"{base}/ui/proposals", wait_until="networkidle")
        expect(page.get_by_text("No open proposal.")).to_be_visible()
        sign_in(page, "alice")
        form = page.locator("#propose")
        form.get_by_label("Standard name").fill("sea_ice_thiknes")
        form.get_by_role("button", name="Propose").click()
        expect(form.get_by_role("alert")).to_have_text(
            "Collection climate_forecast-sea_ice_thiknes: `sea_ice_thiknes` is not a standard "
            "name of the CF Standard Name Table (version 93). Did you mean "
            "`sea_ice_thickness`, `sea_ice_melt_pond_thickness` or `sea_ice_extent`?")
        form.get_by_label("Standard name").fill("sea_ice_thickness")
        form.get_by_label("Description (follows the vocabulary's)").fill(
            "From the ice camp's buoys.")
        form.get_by_label("Why").fill("Our campaign measures it weekly.")
        form.get_by_role("button", name="Propose").click()
        mine = page.locator("#my-proposals")
        expect(mine.get_by_role("heading", name="Sea ice thickness")).to_be_visible()
        expect(page.locator("#open-proposals")).to_contain_text(
            "Why: Our campaign measures it weekly.")
        expect(page.locator("form.decide").first).to_be_hidden()  # not an administrator

        # her file of it: the item waits in her proposal, shown to her there
        token = issuer.mint("alice", settings.process_client_id)
        result = publish(base, token, {"source": f"s3://{bucket}/ice", "s3": {
            "accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": s3_endpoint,
            "defaultRegion": "us-east-1"}})
        [held] = result["held"]
        page.reload(wait_until="networkidle")
        expect(mine).to_contain_text("1 item waiting")
        expect(mine).to_contain_text("Sea ice thickness - thickness.nc (alice, public)")
        assert httpx.get(f"{base}/data/search", params={"q": "thickness"}).json()[
            "features"] == []

        # an administrator accepts it on the page
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("button", name="Sign in")).to_be_visible()
        page.goto(f"{base}/ui/proposals", wait_until="networkidle")
        sign_in(page, "root", settings.admin_right)
        proposal = page.locator(f"#open-proposals #proposal-{held['proposal'].rsplit('/', 1)[1]}")
        expect(proposal).to_contain_text("1 item waiting")
        proposal.get_by_label("Reason").fill("Measured by the ice camp.")
        proposal.get_by_role("button", name="Accept").click()
        expect(page.get_by_text("No open proposal.")).to_be_visible()

        # the item shows in search, as it asked: to anyone
        page.goto(f"{base}/ui/search?q=thickness", wait_until="networkidle")
        expect(page.locator("#results")).to_contain_text("Sea ice thickness - thickness.nc")
