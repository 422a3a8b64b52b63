"""The workflow as a person runs it, on the product as an operator starts it: `geocatalog
serve` with its uvicorn workers and in-process job workers (`make run`'s shape), `geocatalog
serve` with separate `geocatalog worker` processes, and a worker on Slurm; over HTTP and in
Chromium, signed in through the service's own session.

Each runs the loop: find data by words, variable and year; run a bubblewrap tool and a
container tool on what was found, given as a person pastes it (an item's page, a search
page, a collection); watch a job and download its result; publish privately and to a
project; open the published item in STAC Browser in a new tab, download its asset with the
data token and in the browser; open its provenance and its job in new tabs; dismiss the
job; and check what the other users see. The suite's screenshots (`make screenshots`) go
to docs/img."""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.publish.demo_files import catalog_data
from stac_ext.settings import Settings
from tests.support.browser import BROWSER_TESTS, chromium
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.containers import cdo_image, cdo_mean_in
from tests.support.cwl import python_tool
from tests.support.paths import ROOT
from tests.support.product import Product, running
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.slurm import SlurmCluster

pytestmark = [*BROWSER_TESTS, pytest.mark.slow]

AIR = "climate_forecast-air_temperature"
CWL_YAML = {"Content-Type": "application/cwl+yaml"}
#: The docs' pictures (`make screenshots`), taken on `make run`'s shape; else beside the run
SHOTS = ROOT / ("docs/img/workflow" if os.environ.get("UPDATE_SCREENSHOTS")
                else ".artifacts/acceptance")
SHAPES = ["make-run", "serve-and-workers", "slurm"]


@pytest.fixture(scope="module")
def catalog(settings: Settings, s3_endpoint: str) -> str:
    """A database holding the demo catalog, whose items' data is in the bucket `demo` of
    the tests' S3 server."""
    url = new_database(settings.database_url or "", "workflow_")
    for command in (["migrate"], ["demo-data"]):
        out = run_cli(*command, env={"DATABASE_URL": url})
        assert out.returncode == 0, out.stderr
    s3 = s3_client(s3_endpoint)
    if "demo" not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        s3.create_bucket(Bucket="demo")
    items = (ROOT / "stac_ext" / "demo" / "items.ndjson").read_text().splitlines()
    for key, data in catalog_data((json.loads(line) for line in items), "demo"):
        s3.put_object(Bucket="demo", Key=key, Body=data)
    return url


@dataclass
class Service:
    shape: str
    product: Product
    issuer: LocalIssuer
    s3: dict[str, str]

    @property
    def base(self) -> str:
        return self.product.base

    def client(self, user: str, client: str, groups: tuple[str, ...] = (),
               rights: tuple[str, ...] = ()) -> httpx.Client:
        token = self.issuer.mint(user, client, list(groups), list(rights), 3600)
        return self.product.client(token)


@pytest.fixture(scope="module", params=SHAPES)
def service(request: pytest.FixtureRequest, settings: Settings, catalog: str,
            s3_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    shape = request.param
    data_dir = tmp_path_factory.mktemp(f"workflow-{shape}")
    env = {"OIDC_ISSUER": "", "OUTBOUND_ALLOW": "127.0.0.0/8", "JOB_MEMORY": "512Mi"}
    workers, api_workers = {"make-run": (0, 2), "serve-and-workers": (2, 1),
                            "slurm": (1, 1)}[shape]
    if shape == "slurm":
        slurm: SlurmCluster = request.getfixturevalue("slurm_cluster")
        shared = ROOT / ".artifacts" / f"workflow-slurm-{uuid.uuid4().hex[:8]}"
        shared.mkdir(parents=True)
        env |= {**slurm.env, "JOB_EXECUTOR": "slurm", "SLURM_FOLDER": str(shared)}
    with running(settings, data_dir, database_url=catalog, workers=workers,
                 api_workers=api_workers, **env) as product:
        issuer = LocalIssuer(data_dir / "issuer-key.json", f"{product.base}/auth")
        yield Service(shape, product, issuer,
                      {"accessKeyId": KEY_ID, "secretAccessKey": SECRET,
                       "endpoint": s3_endpoint, "defaultRegion": "us-east-1"})
        print(product.log_text()[-20000:])


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def signed_in(browser: Browser, base: str, user: str, groups: str = "") -> BrowserContext:
    """A browser whose pages reach this service only, signed in as `user`."""
    context = browser.new_context()
    context.route("**/*", lambda route: route.continue_()
                  if route.request.url.startswith((base, "data:", "blob:")) else route.abort())
    page = context.new_page()
    page.goto(f"{base}/ui/search")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_label("User name").fill(user)
    page.get_by_label("Groups (projects)").fill(groups)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {user}").first).to_be_visible()
    page.close()
    return context


def shot(page: Page, service: Service, name: str) -> None:
    if service.shape == "make-run":
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SHOTS / f"{name}.png", full_page=True)


def ended(client: httpx.Client, url: str) -> dict:
    """The job once ended (bounded; not a timing assertion)."""
    deadline = time.monotonic() + 300
    while True:
        job = client.get(url).json()
        if job["status"] in ("successful", "failed", "dismissed") or \
                time.monotonic() > deadline:
            return job
        time.sleep(0.3)


def ran(client: httpx.Client, process: str, inputs: dict, **body: object) -> tuple[str, dict]:
    r = client.post(f"/processes/processes/{process}/execution",
                    json={"processInputs": inputs, **body})
    assert r.status_code == 201, r.text
    url = r.headers["Location"]
    job = ended(client, url)
    assert (job["status"], job["message"]) == ("successful", "finished"), job
    return url, client.get(f"{url}/results").json()


def test_the_workflow(service: Service, browser: Browser) -> None:
    base = service.base
    alice = signed_in(browser, base, "alice", "ocean-lab")

    # 1. she finds data by words, variable and year
    page = alice.new_page()
    page.goto(f"{base}/ui/search")
    page.get_by_label(re.compile("^Words")).fill("north sea")
    page.get_by_label(re.compile("^Variables")).fill("air temperature")
    page.get_by_label(re.compile("^Time")).fill("2021")
    page.get_by_label(re.compile("^Time")).press("Enter")
    rows = page.locator("#results tbody tr")
    expect(rows).to_have_count(1)
    found = rows.get_by_role("link", name="Near-surface air temperature, north sea, 2021")
    expect(found).to_be_visible()
    expect(rows.get_by_role("link", name="Explore NetCDF")).to_be_visible()
    shot(page, service, "search")
    pasted_item = found.get_attribute("href") or ""
    pasted_search = page.url
    assert pasted_item == (f"{base}/browser/collections/{AIR}/items/"
                           "air_temperature-north-sea-2021")

    # 2. she deploys a tool of her own (bubblewrap) and CDO's mean (a container), and runs
    # them on what she found, pasted from the pages
    run = uuid.uuid4().hex[:6]
    size, mean = f"size-{run}", f"mean-{run}"
    with service.client("alice", "geocatalog-processes", ("ocean-lab",),
                        ("deployProcess",)) as jobs, \
            service.client("alice", "geocatalog", ("ocean-lab",)) as data:
        for package in (python_tool(
                size, "import os, sys\nprint(os.path.getsize(sys.argv[1]))",
                {"data": "File"}, {"size": "stdout"}), cdo_mean_in(mean, cdo_image())):
            r = jobs.post("/processes/processes", headers=CWL_YAML, content=package,
                          timeout=120)
            assert r.status_code == 201, r.text
        s3 = {"s3": service.s3}
        sized_url, sized = ran(jobs, size, {"data": {"href": pasted_item}, **s3})
        # 3. the result downloads, as its job's results say
        r = jobs.get(sized["size"]["href"])
        assert (r.status_code, r.text) == (200, sized["size"]["contents"])
        assert int(r.text) > 0
        _, by_search = ran(jobs, mean, {"files": [{"href": pasted_search}], **s3})
        assert by_search["mean"]["basename"] == "mean.nc"
        collection = {"collection": f"{base}/browser/collections/{AIR}",
                      "datetime": "2021-01-01T00:00:00Z/2021-12-31T23:59:59Z",
                      "q": "north sea"}
        # 4. published privately, and to her project
        private_url, private = ran(jobs, mean, {"files": [collection], **s3,
                                                "publish": {"visibility": "private"}})
        _, shared = ran(jobs, mean, {"files": [collection], **s3, "publish": {}},
                        metadata={"project": "ocean-lab"})
        private_item, shared_item = private["mean"]["items"][0], shared["mean"]["items"][0]
        # 6. its asset, with the data token (what STAC Browser and pystac-client send)
        asset = data.get(private_item).json()["assets"]["data"]["href"]
        r = data.get(asset)
        assert (r.status_code, len(r.content)) == (200, private["mean"]["size"])

    # 5. the published item in STAC Browser, in a new tab: hers, signed in
    job_page = alice.new_page()
    job_page.goto(private_url)
    expect(job_page.locator("#job-status")).to_have_text("successful")
    shot(job_page, service, "job")
    item_path = private_item.removeprefix(f"{base}/data/")
    tab = alice.new_page()
    tab.goto(f"{base}/browser/{item_path}")
    expect(tab.get_by_text("Derived from", exact=False).first).to_be_visible(timeout=30000)
    expect(tab.get_by_text("The job that made this item")).to_be_visible()
    shot(tab, service, "item")
    # 6. ... and downloaded in the browser, with the session
    downloaded = tab.request.get(asset)
    assert (downloaded.status, len(downloaded.body())) == (200, private["mean"]["size"])

    # 7. its provenance and its job, each in a new tab
    with alice.expect_page() as opened:
        tab.get_by_text("The job's provenance (W3C PROV)").click()
    prov = opened.value
    job_id = private_url.rsplit("/", 1)[1]
    expect(prov.get_by_role("heading", name=f"Provenance of job {job_id}")).to_be_visible()
    expect(prov.locator("#provenance-summary")).to_contain_text(f"alice ran the process {mean}")
    expect(prov.locator("#provenance-inputs tbody tr")).to_have_count(1)
    shot(prov, service, "provenance")
    with alice.expect_page() as opened:
        tab.get_by_text("The job that made this item").click()
    made = opened.value
    expect(made.locator("#job-status")).to_have_text("successful")
    expect(made.locator("#job-process")).to_have_text(mean)

    # 8. she dismisses it from its page; the item stays, hers
    made.get_by_role("button", name="Dismiss").click()
    made.get_by_role("button", name="Dismiss the job").click()
    expect(made.locator("#job-status")).to_have_text("dismissed")
    tab.reload()
    expect(tab.get_by_text("Derived from", exact=False).first).to_be_visible(timeout=30000)
    alice.close()

    # what the others see: bob nothing of hers, carol (ocean-lab) the project's item only;
    # without a token, a job's file asks for one (whether or not it exists)
    for reader, groups, sees in (("bob", (), (404, 404, 404)),
                                 ("carol", ("ocean-lab",), (404, 200, 404)),
                                 (None, (), (404, 404, 401))):
        with (service.client(reader, "geocatalog", groups) if reader else
              service.product.client()) as other:
            seen = (other.get(private_item).status_code, other.get(shared_item).status_code,
                    other.get(asset).status_code)
        assert seen == sees, (reader, seen)
    with service.client("alice", "geocatalog-processes") as jobs:
        assert jobs.get(private_url).status_code == 404  # dismissed: gone
        assert jobs.get(sized_url).json()["status"] == "successful"
    assert quote(job_id) == job_id
