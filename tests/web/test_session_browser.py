"""The service's sign-in in Chromium, on `uvicorn --workers 2` (every worker finds every
session): signed in once, every tab and every reload is signed in, our pages and STAC
Browser alike, with no token anywhere in the browser; the deploy form; a deployed job's
progress while it runs, none for one that failed; dismissing a finished job, once
confirmed; signing out from the bar over STAC Browser signs out every tab."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from stac_ext.settings import Settings
from tests.support.browser import BROWSER_TESTS, chromium
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.http import signing_in_locally
from tests.support.paths import ROOT

pytestmark = BROWSER_TESTS
SHOTS = ROOT / ".artifacts" / "web-session"
SST = "climate_forecast-sea_surface_temperature"
#: A tool that runs a few seconds and reports no progress of its own
NAP = """\
cwlVersion: v1.2
class: CommandLineTool
id: lab-nap
label: Nap
doc: Sleeps a little.
baseCommand: [sleep, "4"]
inputs: {}
outputs: []
"""
#: A tool that fails
FALL = """\
cwlVersion: v1.2
class: CommandLineTool
id: lab-fall
label: Fall
baseCommand: ["false"]
inputs: {}
outputs: []
"""


@pytest.fixture(scope="module")
def service(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`make run`'s shape, on two uvicorn workers: demo data, the local issuer, in-process
    job workers."""
    url = new_database(settings.database_url or "", "sessionweb_")
    for command in (["migrate"], ["demo-data"]):
        assert run_cli(*command, env={"DATABASE_URL": url}).returncode == 0, command
    with signing_in_locally(settings, tmp_path_factory.mktemp("session-web"),
                            options=("--workers", "2"), DATABASE_URL=url,
                            IN_PROCESS_WORKER="true") as (base, _):
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def local_only(page: Page, base: str) -> Page:
    page.route("**/*", lambda route: route.continue_()
               if route.request.url.startswith((base, "data:", "blob:")) else route.abort())
    return page


def sign_in(page: Page, user: str, groups: str = "", rights: str = "") -> None:
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("DEVELOPMENT ONLY.")).to_be_visible()
    page.get_by_label("User name").fill(user)
    page.get_by_label("Groups (projects)").fill(groups)
    page.get_by_label("Rights").fill(rights)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#signed-in-as")).to_have_text(f"Signed in as {user}")


def deploy(page: Page, base: str, document: str) -> None:
    page.goto(f"{base}/ui/processes")
    page.get_by_role("link", name="Deploy a process").click()
    form = page.locator("#deploy-form")
    form.get_by_label("The process").fill(document)
    expect(page.locator("#deploy-kind")).to_have_text("Sent as CWL (YAML).")
    form.get_by_label("Who may see and run it").select_option("project")
    form.get_by_label("Project").select_option("ocean-lab")
    form.get_by_role("button", name="Deploy").click()


def test_one_sign_in_for_every_tab(service: str, browser: Browser) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    first = local_only(context.new_page(), service)
    first.goto(f"{service}/ui/processes")
    sign_in(first, "dora", "ocean-lab", "deployProcess")
    assert urlsplit(first.url).path == "/ui/processes"  # back where she was

    # the cookie is the whole of it: HttpOnly, SameSite, nothing a script can read
    cookies = {c["name"]: c for c in context.cookies()}
    assert set(cookies) == {"geocatalog-session"}
    session = cookies["geocatalog-session"]
    assert (session["httpOnly"], session["sameSite"], session["path"]) == (True, "Lax", "/")
    stored = first.evaluate("JSON.stringify([sessionStorage, localStorage, document.cookie])")
    assert stored == '[{},{},""]'

    # a new tab, our pages and STAC Browser: signed in, and again after a reload (served
    # by either worker)
    second = local_only(context.new_page(), service)
    for _ in range(3):
        second.goto(f"{service}/browser/collections/{SST}")
        expect(second.locator("#geocatalog-bar-user")).to_have_text("Signed in as dora")
        second.reload()
        expect(second.locator("#geocatalog-bar-user")).to_have_text("Signed in as dora")
        second.goto(f"{service}/ui/jobs")
        expect(second.locator("#signed-in-as")).to_have_text("Signed in as dora")
        expect(second.get_by_text("Sign in to see your jobs.")).to_be_hidden()
    assert "eyJ" not in second.content()

    # the deploy form: her tool, for her project; its page once deployed
    deploy(second, service, NAP)
    # (its package is checked first, in a process of its own: seconds)
    expect(second.get_by_role("heading", name="Nap")).to_be_visible(timeout=60_000)
    assert urlsplit(second.url).path == "/ui/processes/lab-nap"
    second.screenshot(path=SHOTS / "deployed.png", full_page=True)
    # the same id again: the API's refusal, next to the form
    deploy(second, service, NAP)
    expect(second.locator("#deploy-error")).to_contain_text("lab-nap", timeout=60_000)
    # deployed for her project: listed, and counted on the landing page
    second.goto(f"{service}/")
    count = int(re.search(r"(\d+) processes", second.locator(".cards").inner_text()).group(1))
    first.goto(f"{service}/ui/processes")
    expect(first.locator("#process-list tbody tr")).to_have_count(count)

    # a run: the bar moves while it runs (the tool reports no progress), full once done
    first.goto(f"{service}/ui/processes/lab-nap")
    first.locator("#execute").get_by_role("button", name="Run").click()
    expect(first.locator("#job-status")).to_have_text("running", timeout=60_000)
    progress = first.locator("#job-progress")
    expect(progress).to_be_visible()
    assert progress.get_attribute("value") is None  # indeterminate, not a stuck 0 %
    expect(first.locator("#job-percent")).to_have_text("running")
    first.screenshot(path=SHOTS / "running.png", full_page=True)
    expect(first.locator("#job-status")).to_have_text("successful", timeout=60_000)
    expect(progress).to_have_attribute("value", "100")
    # the job page, in another tab: the same job, signed in
    job_url = first.url
    second.goto(job_url)
    expect(second.locator("#job-status")).to_have_text("successful")

    # one that fails shows no bar at all
    deploy(second, service, FALL)
    expect(second.get_by_role("heading", name="Fall")).to_be_visible(timeout=60_000)
    second.locator("#execute").get_by_role("button", name="Run").click()
    expect(second.locator("#job-status")).to_have_text("failed", timeout=60_000)
    expect(second.locator("#job-progress")).to_be_hidden()
    expect(second.locator("#job-percent")).to_have_text("")
    # dismissed from its page, once confirmed; kept when she thinks again
    second.get_by_role("button", name="Dismiss").click()
    expect(second.locator("#dismiss-question")).to_have_text(
        "Dismiss this job? Its log goes, and it leaves your job list.")
    second.get_by_role("button", name="Keep it").click()
    expect(second.locator("#job-status")).to_have_text("failed")
    second.get_by_role("button", name="Dismiss").click()
    second.get_by_role("button", name="Dismiss the job").click()
    expect(second.locator("#job-status")).to_have_text("dismissed")
    second.goto(f"{service}/ui/jobs")
    expect(second.locator("#jobs tbody tr")).to_have_count(1)  # the nap, not the fall

    # signing out from the bar over STAC Browser: every tab is signed out
    second.goto(f"{service}/browser/")
    second.locator("#geocatalog-bar").get_by_role("button", name="Sign out").click()
    expect(second.get_by_role("button", name="Sign in")).to_be_visible()
    first.reload()
    expect(first.get_by_role("button", name="Sign in")).to_be_visible()
    expect(first.get_by_text("Sign in to see this job.")).to_be_visible()
    assert context.cookies() == []
    context.close()
