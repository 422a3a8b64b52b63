"""A standing job saved in a browser (Debian's Chromium, Playwright) from the product as
`make run` runs it (`geocatalog serve`, its in-process worker, its local issuer): on the
search page alice picks her deployed time mean (CDO) under "Process new data", two new sea
surface temperature items arrive (their files on a data server on loopback), the job runs
as her on exactly those two, publishes its mean with `derived_from` links to them, and her
subscriptions page shows the run and opens its job."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.publish.demo_files import sst_monthly
from stac_ext.settings import Settings
from tests.support.browser import BROWSER_TESTS, chromium, page_of, shot, sign_in
from tests.support.cluster import migrated_database
from tests.support.cwl import CWL_YAML, cdo_mean
from tests.support.file_server import serving_folder
from tests.support.paths import ROOT
from tests.support.product import Product, running
from tests.support.stac import SST, make_collection, make_item

pytestmark = [*BROWSER_TESTS, pytest.mark.slow]

PROCESS = "sst-mean-web"
SHOTS = ROOT / ".artifacts" / "web-subscriptions"


@pytest.fixture(scope="module")
def product(settings: Settings, database_url: str, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Product, LocalIssuer]]:
    """The service as `make run` serves it (its own issuer, its in-process worker), on a
    fresh migrated database, allowed to fetch from loopback: it, and its issuer."""
    database = migrated_database(database_url, "standing_web_")
    data_dir = tmp_path_factory.mktemp("standing-web")
    with running(settings, data_dir, database_url=database, OIDC_ISSUER="",
                 OUTBOUND_ALLOW="127.0.0.0/8", SUBSCRIPTIONS_POLL_SECONDS="0.2") as started:
        yield started, LocalIssuer(data_dir / "issuer-key.json", f"{started.base}/auth")


@pytest.fixture(scope="module")
def data_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Monthly sea surface temperature files on a data server on loopback: its URL."""
    folder: Path = tmp_path_factory.mktemp("sst-files")
    for key, body in sst_monthly():
        (folder / key).write_bytes(body)
    with serving_folder(folder) as base:
        yield base


def test_process_new_data_saves_a_standing_job_whose_run_shows_on_her_page(
        product: tuple[Product, LocalIssuer], data_server: str, settings: Settings) -> None:
    served, issuer = product
    base = served.base
    admin = served.client(issuer.mint("root", settings.data_client_id,
                                      rights=[settings.admin_right]))
    data = served.client(issuer.mint("alice", settings.data_client_id))
    processes = served.client(issuer.mint("alice", settings.process_client_id,
                                          rights=["deployProcess"]))
    r = admin.post("/data/collections", json=make_collection(SST))
    assert r.status_code == 201, r.text
    r = processes.post("/processes/processes", content=cdo_mean(PROCESS), headers=CWL_YAML)
    assert r.status_code == 201, r.text

    with chromium() as browser:
        page, errors = page_of(browser, base)
        page.goto(f"{base}/ui/search?collections={SST}", wait_until="networkidle")
        sign_in(page, "alice")
        follow = page.locator("#follow")
        expect(follow).to_be_visible()
        follow.get_by_label("Name").fill("Monthly means")
        follow.get_by_label("Process", exact=True).select_option(PROCESS)
        follow.get_by_label("Run every … new items").fill("2")
        follow.get_by_role("button", name="Process new data").click()
        expect(page.locator("#follow-done")).to_be_visible()
        expect(page.locator("#follow-secret")).to_be_hidden()  # no webhook, no secret
        shot(page, SHOTS, "standing-saved")

        r = data.get("/data/subscriptions")
        assert r.status_code == 200, r.text
        [saved] = r.json()["subscriptions"]
        assert (saved["title"], saved["search"], saved["webhook"], saved["job"]) == (
            "Monthly means", {"collections": [SST]}, None,
            {"process": PROCESS, "itemsInput": "files", "inputs": {}, "publish": {},
             "window": {"items": 2, "seconds": 86400}, "retries": 0})

        # two months arrive: the window closes, the job runs as her
        urls = []
        for key, _ in list(sst_monthly())[:2]:
            item = make_item(f"web-{key.removesuffix('.nc')}", data=f"{data_server}/{key}")
            item["assets"]["data"]["type"] = "application/x-netcdf"
            r = data.post(f"/data/collections/{SST}/items", json=item)
            assert r.status_code == 201, r.text
            urls.append(r.headers["Location"])
        run = until_ended(data, f"/data/subscriptions/{saved['id']}/runs")
        assert (run["status"], run["items"], run["message"]) == ("successful", 2, None), run
        [job_id] = run["jobs"]

        # her page shows the run, and opens its job
        page.get_by_role("link", name="your subscriptions").click()
        card = page.locator("article.subscription")
        expect(card.get_by_role("heading", name="Monthly means")).to_be_visible()
        expect(card.get_by_role("heading", name=f"Runs of {PROCESS}")).to_be_visible()
        rows = card.locator("table tbody tr")
        expect(rows).to_have_count(1)
        expect(rows.first.locator("td")).to_have_text(["1", "2", "successful", "job", ""])
        shot(page, SHOTS, "standing-runs")
        rows.first.get_by_role("link", name="job").click()
        page.wait_for_url(f"{base}/ui/jobs/{job_id}")
        expect(page.locator("#job-status")).to_have_text("successful")
        expect(page.locator("#results .result-file strong")).to_have_text("mean.nc")
        assert errors == []

    # it read exactly the two, and published its mean (hers, private) derived from them
    r = processes.get(f"/processes/jobs/{job_id}/results")
    assert r.status_code == 200, r.text
    [mean] = r.json()["mean"]["items"]
    r = data.get(mean)
    assert r.status_code == 200, r.text
    published = r.json()
    assert published["properties"]["owner"] == "alice"
    assert sorted(link["href"] for link in published["links"]
                  if link["rel"] == "derived_from") == sorted(urls)
    r = processes.get(f"/processes/jobs/{job_id}/prov")
    assert r.status_code == 200, r.text
    assert sorted(e["geocatalog:item"] for name, e in r.json()["entity"].items()
                  if name.startswith("job:inputs/")) == sorted(urls)


def until_ended(client: httpx.Client, runs: str) -> dict[str, Any]:
    """The subscription's one run, once it has ended (bounded; not a timing assertion)."""
    deadline = time.monotonic() + 300
    while True:
        r = client.get(runs)
        assert r.status_code == 200, r.text
        found = r.json()["runs"]
        if (found and found[0]["status"] in ("successful", "failed")) \
                or time.monotonic() > deadline:
            [run] = found
            return dict(run)
        time.sleep(0.3)
