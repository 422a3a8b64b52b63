"""The web face in a real browser: Debian's Chromium driven by Playwright, against a real
uvicorn with the demo data, the local issuer's sign-in form and an in-process job worker.

One scripted session, as a person would go: browse, search, sign in, organise catalogs, run
and watch processes, sign out. Every step saves a screenshot under `.artifacts/web/`.
Requests that would leave 127.0.0.1 are stopped in the browser and recorded: only the
basemap's tiles may be among them (and the remote `$ref`s of pgstac's queryables, which
STAC Browser tries to resolve); no page needs them.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Locator,
    Page,
    Route,
    expect,
)

from stac_ext.settings import Settings
from tests.support.browser import BROWSER_TESTS, chromium
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.cwl import shout_tool
from tests.support.http import signing_in_locally
from tests.support.paths import ROOT
from tests.support.stac import make_item

SHOTS = ROOT / ".artifacts" / "web"
#: The steps whose screenshots illustrate the docs (docs/scientists/browser.md): taken here,
#: each run, so that the pictures follow the pages.
#: The docs' screenshots: retaken into docs/img by `make screenshots`, else beside the
#: run's own (a test run leaves the checkout as it found it)
DOCS_SHOTS = ROOT / ("docs/img" if os.environ.get("UPDATE_SCREENSHOTS") else
                     ".artifacts/docs-img") / "web"
DOCS_STEPS = frozenset({"landing", "catalog", "item", "example", "search-owner",
                        "search-results", "catalog-tree", "not-yours", "delete-links",
                        "echo-result", "jobs", "api-docs", "search-narrowed",
                        "private-after-reload", "private-catalog"})
#: what a page may try to reach outside this machine; all of it is stopped in the browser
#: and nothing shown depends on it
OUTSIDE_ALLOWED = {"tile.openstreetmap.org", "schemas.stacspec.org", "geojson.org"}
SST = "climate_forecast-sea_surface_temperature"
#: A tool whose run cwltool fails: its argument refers to an input it does not have
MISREFERENCED = """\
cwlVersion: v1.2
class: CommandLineTool
id: lab-misreferenced
label: Misreferenced
baseCommand: echo
inputs:
  message: string
arguments: [$(inputs.nothing.basename)]
outputs: []
"""
#: A tool of one File input: its form takes an address, a text or an upload
WORD_COUNT = """\
cwlVersion: v1.2
class: CommandLineTool
id: lab-word-count
label: Word count
baseCommand: [wc, -w]
stdin: $(inputs.text.path)
inputs:
  text: {type: File, label: Text}
outputs:
  words: stdout
stdout: count.txt
"""
NORTH_SEA_2022 = "Sea surface temperature, north sea, 2022"
#: alice's private item: in STAC Browser for her signed in, for nobody else
DRAFT, DRAFT_TITLE = "alices-draft", "Alice's draft, north sea"
NOTES = "Alice's notes"  # her private catalog
RAW = "Raw notes"  # her private sub-catalog of a public catalog of hers
PAYLOAD = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"

pytestmark = BROWSER_TESTS


@pytest.fixture(scope="module")
def web_server(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """geocatalog as `make run` starts it: demo data, the local issuer, a job worker; and
    an item of carol's whose title is a script."""
    url = new_database(settings.database_url or "", "web_")
    for command in (["migrate"], ["demo-data"]):
        assert run_cli(*command, env={"DATABASE_URL": url}).returncode == 0, command
    with signing_in_locally(settings, tmp_path_factory.mktemp("web-data"), DATABASE_URL=url,
                            IN_PROCESS_WORKER="true") as (base, issuer):
        carol = issuer.mint("carol", settings.data_client_id)
        item = make_item("carols-item", x=2, day=15)
        item["properties"]["title"] = PAYLOAD
        r = httpx.post(f"{base}/data/collections/{SST}/items", json=item,
                       headers={"Authorization": f"Bearer {carol}"})
        assert r.status_code == 201, r.text
        r = httpx.post(f"{base}/data/catalogs", headers={"Authorization": f"Bearer {carol}"},
                       json={"id": "carols", "type": "Catalog", "description": "Carol's"})
        assert r.status_code == 201, r.text
        alice = issuer.mint("alice", settings.data_client_id)
        draft = make_item(DRAFT, x=3, day=16)
        draft["properties"].update(title=DRAFT_TITLE, visibility="private")
        r = httpx.post(f"{base}/data/collections/{SST}/items", json=draft,
                       headers={"Authorization": f"Bearer {alice}"})
        assert r.status_code == 201, r.text
        r = httpx.post(f"{base}/data/catalogs", headers={"Authorization": f"Bearer {alice}"},
                       json={"id": "alices-notes", "type": "Catalog", "title": NOTES,
                             "description": "Not for anyone yet", "visibility": "private"})
        assert r.status_code == 201, r.text
        # her public catalog, with a private sub-catalog and a link to her private item
        draft_href = f"{base}/data/collections/{SST}/items/{DRAFT}"
        for parent, body in (("", {"id": "field-trip", "title": "Field trip",
                                   "links": [{"rel": "item", "href": draft_href}]}),
                             ("/field-trip", {"id": "raw", "title": RAW,
                                              "visibility": "private"})):
            r = httpx.post(f"{base}/data/catalogs{parent}",
                           headers={"Authorization": f"Bearer {alice}"},
                           json={"type": "Catalog", "description": "Alice's trip", **body})
            assert r.status_code == 201, r.text
        dora = issuer.mint("dora", settings.process_client_id, groups=["ocean-lab"],
                           rights=["deployProcess"])
        r = httpx.post(f"{base}/processes/processes", content=shout_tool("lab-shout"),
                       params={"visibility": "project", "project": "ocean-lab"},
                       headers={"Authorization": f"Bearer {dora}",
                                "Content-Type": "application/cwl+yaml"})
        assert r.status_code == 201, r.text
        r = httpx.post(f"{base}/processes/processes", content=MISREFERENCED,
                       params={"visibility": "project", "project": "ocean-lab"},
                       headers={"Authorization": f"Bearer {dora}",
                                "Content-Type": "application/cwl+yaml"})
        assert r.status_code == 201, r.text
        r = httpx.post(f"{base}/processes/processes", content=WORD_COUNT,
                       params={"visibility": "project", "project": "ocean-lab"},
                       headers={"Authorization": f"Bearer {dora}",
                                "Content-Type": "application/cwl+yaml"})
        assert r.status_code == 201, r.text
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    shutil.rmtree(SHOTS, ignore_errors=True)  # this run's screenshots only
    with chromium() as launched:
        yield launched


class Session:
    """One browser tab: screenshots per step, console errors, requests leaving 127.0.0.1."""

    def __init__(self, page: Page, base: str) -> None:
        self.page, self.base = page, base
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.shots: list[Path] = []
        self.provoked: set[int] = set()  # HTTP errors a step provokes on purpose
        page.route("**/*", self._route)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        page.on("dialog", lambda dialog: self.errors.append(f"dialog: {dialog.message}"))

    def _route(self, route: Route) -> None:
        url = route.request.url
        if urlsplit(url).hostname in ("127.0.0.1", None) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def _console(self, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        text = message.text
        # what the stopped requests to the outside leave behind
        if "net::ERR_FAILED" in text or any(host in text for host in OUTSIDE_ALLOWED):
            return
        # the browser's own line, and STAC Browser's (axios) for the same answer
        if any(f"status of {status} " in text or f"status code {status}" in text
               for status in self.provoked):
            return
        self.errors.append(f"{text} ({message.location.get('url')})")

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{len(self.shots) + 1:02d}-{name}.png"
        self.page.screenshot(path=path, full_page=True)
        self.shots.append(path)
        if name in DOCS_STEPS:
            DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=DOCS_SHOTS / f"{name}.jpg", type="jpeg", quality=70)

    def goto(self, path: str) -> None:
        self.page.goto(self.base + path)


def search_by_words(page: Page, words: str) -> Locator:
    """STAC Browser's item search by free text (`q`), submitted: its form."""
    page.get_by_role("tab", name="Search for Items").click()
    form = page.locator(".tab-pane.active")
    # its input shows once the field is opened
    form.locator(".multiselect:has(input[placeholder='Enter one or more search terms...'])"
                 ).click()
    page.keyboard.type(words)
    page.keyboard.press("Enter")
    form.get_by_role("button", name="Submit").click()
    return form


def test_a_person_in_a_browser(web_server: str, browser: Browser) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    s = Session(context.new_page(), web_server)
    page = s.page

    # the landing page, then STAC Browser over this service's catalog
    s.goto("/")
    expect(page.get_by_role("heading", name="geocatalog", level=1)).to_be_visible()
    s.shot("landing")
    page.get_by_role("link", name="Browse and search the catalog").click()
    expect(page.get_by_text("Sea surface temperature", exact=True)).to_be_visible()
    assert urlsplit(page.url).path == "/browser/"
    s.shot("catalog")

    # a collection, its items page by page, one item with its footprint and assets
    page.get_by_text("Sea surface temperature", exact=True).click()
    expect(page.get_by_role("heading", name="Sea surface temperature", level=1)).to_be_visible()
    first_page = page.get_by_text(re.compile(r"^Sea surface temperature, .*, 20\d\d$"))
    expect(first_page.first).to_be_visible()
    shown = set(first_page.all_inner_texts())
    s.shot("collection")
    page.get_by_text("Next \u203a").first.click()  # STAC Browser's pager
    expect(page.get_by_text(re.compile(r"^Sea surface temperature, .*, 20\d\d$")).first
           ).not_to_have_text(sorted(shown)[0])
    second = set(page.get_by_text(re.compile(r"^Sea surface temperature, .*, 20\d\d$"))
                 .all_inner_texts())
    assert second and not second & shown, (shown, second)
    s.shot("items-next-page")

    s.goto(f"/data/collections/{SST}/items/sea_surface_temperature-north-sea-2022")
    assert urlsplit(page.url).path == \
        f"/browser/collections/{SST}/items/sea_surface_temperature-north-sea-2022"
    expect(page.get_by_role("heading", name=NORTH_SEA_2022)).to_be_visible()
    expect(page.locator(".map canvas").first).to_be_visible()  # the footprint's map
    expect(page.get_by_text("Sea surface temperature north-sea 2022 (Zarr)", exact=True)
           ).to_be_visible()
    expect(page.get_by_text("Open the data with xarray (Python)")).to_be_visible()
    # no data explorer configured (as with `make run`): the links open the service's own
    expect(page.get_by_role("link", name="Open 'Sea surface temperature north-sea 2022 (Zarr)' "
                            "in the data explorer")).to_have_attribute(
        "href", re.compile(r"/ui/explore\?collection=climate_forecast"))
    s.shot("item")
    # the example opens as code to read (it was STAC Browser's "not a valid JSON object")
    with page.context.expect_page() as opened:
        page.get_by_text("Open the data with xarray (Python)").click()
    example = opened.value
    example.wait_for_load_state()
    assert urlsplit(example.url).path.endswith(
        "/items/sea_surface_temperature-north-sea-2022/example.py"), example.url
    expect(example.locator("body")).to_contain_text("def open_data():")
    expect(example.locator("body")).to_contain_text("import xarray as xr")
    example.screenshot(path=DOCS_SHOTS / "example.jpg", type="jpeg", quality=70)
    example.close()

    # from STAC Browser back to our pages, by the bar above it
    page.locator("#geocatalog-bar").get_by_role("link", name="Processes").click()
    expect(page.get_by_role("heading", name="Processes")).to_be_visible()

    # a search address opened in a browser shows its results, each opening in STAC Browser
    s.goto("/data/search?bbox=-10,35,30,60&datetime=2021-01-01T00:00:00Z/2021-12-31T23:59:59Z"
           f"&collections={SST}")
    expect(page.get_by_role("heading", name="Items found")).to_be_visible()
    expect(page.locator("#results tbody tr")).to_have_count(5)  # the demo's 2021 SST items
    expect(page.locator("#matched")).to_have_text("5 items match; 5 on this page.")
    # typed dates (STAC Browser's own picker goes month by month)
    form = page.locator("#search-form")
    form.get_by_label("Time").fill("2021-01-01/2021-01-31")
    form.get_by_role("button", name="Search").click()
    expect(page.locator("#criteria")).to_contain_text(
        "Time2021-01-01T00:00:00Z to 2021-01-31T23:59:59Z")
    expect(page.locator("#criteria")).to_contain_text("VariablesSea surface temperature")
    # the Words box as wide as the others
    widths = {box: form.locator(box).bounding_box()["width"] for box in ("#f-q", "#f-bbox")}
    assert widths["#f-q"] == widths["#f-bbox"], widths
    form = page.locator("#search-form")
    form.get_by_label("Time").fill("2021")  # a year, as a person types it
    form.get_by_role("button", name="Search").click()
    expect(page.locator("#results tbody tr")).to_have_count(5)
    expect(page.locator("#f-datetime")).to_have_value("2021")
    s.shot("search-results")
    page.locator("#results tbody a").first.click()
    expect(page.get_by_role("heading", name=re.compile(r"^Sea surface temperature, .*2021$"))
           ).to_be_visible()

    # search by bbox (a click at the map's centre: a box around 0°N 0°E) and datetime
    page.get_by_role("link", name="Search").first.click()
    page.get_by_role("tab", name="Search for Items").click()
    form = page.locator(".tab-pane.active")
    form.locator(".mx-input").click()
    page.keyboard.type("2022-11-01 00:00:00 ~ 2022-11-30 23:59:59")
    page.keyboard.press("Enter")
    form.get_by_text("Filter by spatial extent").click()
    box = form.locator(".map-container .map").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    form.get_by_role("button", name="Submit").click()
    expect(page.get_by_text("Sea surface temperature, gulf of guinea, 2022")).to_be_visible()
    expect(page.get_by_text("Sea water salinity, gulf of guinea, 2022")).to_be_visible()
    expect(page.get_by_text(NORTH_SEA_2022)).to_have_count(0)  # outside the box
    expect(page.get_by_text("Sea surface temperature, gulf of guinea, 2021")).to_have_count(0)
    s.shot("search")
    # the owner, as an additional filter (our `owner` queryable, CQL2)
    page.get_by_role("button", name="Reset").click()
    page.get_by_role("tab", name="Search for Items").click()
    form = page.locator(".tab-pane.active")
    form.get_by_role("button", name="Add filter").click()
    form.get_by_role("menuitem", name="Owner").click()
    form.locator(".queryable-row input.value").fill("carol")
    form.get_by_role("button", name="Submit").click()
    expect(page.get_by_text(PAYLOAD, exact=True)).to_be_visible()  # its title, as text
    expect(page.get_by_text(NORTH_SEA_2022)).to_have_count(0)
    assert page.evaluate("window.__pwned") is None
    s.shot("search-owner")

    # free text in STAC Browser: it offers search terms (the API claims free text)
    page.get_by_role("button", name="Reset").click()
    form = search_by_words(page, "baltic")
    expect(page.get_by_text("Sea surface temperature, baltic, 2022")).to_be_visible()
    expect(page.get_by_text(NORTH_SEA_2022)).to_have_count(0)
    s.shot("search-words")
    # and sorted: STAC Browser offers sorting (the API claims sort); by time, oldest first
    form.locator(".sort .multiselect").click()
    form.locator(".sort .multiselect__option", has_text="Time of Data").click()
    with page.expect_request(lambda r: "/search" in r.url and "sortby" in (
            r.post_data or r.url)) as searched:
        form.get_by_role("button", name="Submit").click()
    assert "properties.datetime" in (searched.value.post_data or searched.value.url)
    # (unsorted, the newest come first)
    baltic = page.get_by_text(re.compile(r"^Sea surface temperature, baltic, \d{4}$"))
    expect(baltic.first).to_have_text("Sea surface temperature, baltic, 2021")
    years = baltic.all_inner_texts()
    assert len(years) >= 2 and years == sorted(years), years
    s.shot("search-sorted")

    # words and facets from the home page: the top variables and years, with their counts
    s.goto("/")
    expect(page.locator("#facet-variables li").first).to_be_visible()
    expect(page.locator("#facet-variables")).to_contain_text(
        "Sea surface temperature 13")  # carol's too; the variable in words, its id a tooltip
    expect(page.locator("#facet-variables").get_by_role("link", name="Sea surface temperature")
           ).to_have_attribute("title", SST)
    expect(page.locator("#facet-years")).to_have_text(re.compile(r"Years\s+2022 24\s+2021 25\s*"))
    page.locator("#facet-years").get_by_role("link", name="2022").click()
    expect(page.locator("#criteria")).to_contain_text(
        "Time2022-01-01T00:00:00Z to 2022-12-31T23:59:59Z")
    # the search's own facets narrow it: a variable of 2022, then its count is the page's
    variable = page.locator("#narrow-variables li", has=page.get_by_role(
        "link", name="Sea surface temperature"))
    count = variable.locator(".count").inner_text()
    variable.get_by_role("link").click()
    expect(page.locator("#criteria")).to_contain_text("VariablesSea surface temperature")
    expect(page.locator("#matched")).to_contain_text(f"{count} item")
    s.shot("search-narrowed")
    s.goto("/")
    page.get_by_label("Find data by words").fill('"north sea" temperature -air')
    page.locator("#home-search").get_by_role("button", name="Search").click()
    expect(page.locator("#results tbody tr")).to_have_count(2)
    expect(page.locator("#results")).to_contain_text(NORTH_SEA_2022)
    s.shot("search-home-words")

    # sign in through the local issuer's form, from a protected page
    s.goto("/ui/jobs")
    expect(page.get_by_text("Sign in to see your jobs.")).to_be_visible()
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("DEVELOPMENT ONLY.")).to_be_visible()
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Groups (projects)").fill("ocean-lab")
    page.get_by_label("Rights").fill("updateCatalog")
    s.shot("sign-in-form")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as alice")).to_be_visible()
    assert urlsplit(page.url).path == "/ui/jobs"
    assert "code=" not in page.url and "token" not in page.url
    s.shot("signed-in")

    # her private item among her search's results on the service's page (anyone's: 2)
    s.goto('/ui/search?q="north sea" temperature -air')
    expect(page.locator("#results tbody tr")).to_have_count(3)
    expect(page.locator("#results")).to_contain_text(DRAFT_TITLE)
    expect(page.locator("#matched")).to_have_text("3 items match; 3 on this page.")
    s.shot("private-signed-in")
    # one sign-in, the service's: STAC Browser opens it with hers, and so again after a
    # reload and at a typed address; its bar says who reads
    page.locator("#results").get_by_role("link", name=DRAFT_TITLE).click()
    expect(page.get_by_role("heading", name=DRAFT_TITLE)).to_be_visible()
    page.reload()
    expect(page.get_by_role("heading", name=DRAFT_TITLE)).to_be_visible()
    expect(page.locator("#geocatalog-bar-user")).to_have_text("Signed in as alice")
    expect(page.get_by_role("button", name="Log in")).to_have_count(0)  # she is
    s.shot("private-after-reload")
    s.goto(f"/browser/collections/{SST}/items/{DRAFT}")
    expect(page.get_by_role("heading", name=DRAFT_TITLE)).to_be_visible()

    # a project catalog, and a child linking a collection and an item; her private
    # catalog is listed for her (the list again with her token)
    page.get_by_role("link", name="Catalogs", exact=True).click()
    expect(page.locator("#top-catalogs")).to_contain_text(NOTES)
    s.provoked = {404}  # the page as anyone gets it: its shell, a 404
    page.locator("#top-catalogs").get_by_role("link", name=NOTES).click()
    expect(page.get_by_role("heading", name=NOTES)).to_be_visible()  # with her token
    expect(page.locator("#catalog-actions")).to_be_visible()  # hers: its forms bound
    s.provoked = set()
    s.shot("private-catalog")
    # her public catalog as she reads it: the private sub-catalog and item link only she
    # reads are there, and its forms keep and count them (the page again with her token)
    s.goto("/ui/catalogs/field-trip")
    expect(page.locator("#sub-catalogs")).to_have_text(f"{RAW} only its owner")
    expect(page.locator("#linked-items")).to_have_text(DRAFT_TITLE)  # the item's title
    expect(page.locator("#links")).to_have_value(f"{SST}/{DRAFT}\n")
    expect(page.locator("#subtree")).to_have_text("field-trip/raw")
    expect(page.locator("#catalog-actions")).to_be_visible()
    page.get_by_role("banner").get_by_role("link", name="Catalogs", exact=True).click()
    create = page.locator("#create-catalog")
    create.get_by_label("Id").fill("ocean")
    create.get_by_label("Title").fill("Ocean lab")
    create.get_by_label("Description").fill(f"Our data {PAYLOAD}")
    create.get_by_label("Project").select_option("ocean-lab")
    expect(create.get_by_label("Who reads it")).to_have_value("private")  # as it says
    create.get_by_label("Who reads it").select_option("public")
    create.get_by_role("button", name="Create catalog").click()
    expect(page.get_by_role("heading", name="Ocean lab")).to_be_visible()
    expect(page.locator("#catalog-readers")).to_have_text("read by anyone")
    expect(page.locator("#catalog-description")).to_have_text(f"Our data {PAYLOAD}")
    assert page.evaluate("window.__pwned") is None
    create = page.locator("#create-catalog")
    create.get_by_label("Id").fill("sst")
    create.get_by_label("Title").fill("Sea surface")
    create.get_by_label("Description").fill("Sea surface temperature we use")
    create.get_by_label("Collections and items").fill(
        f"{SST}\n{SST}/sea_surface_temperature-north-sea-2022")
    create.get_by_label("Who reads it").select_option("public")
    create.get_by_role("button", name="Create sub-catalog").click()
    expect(page.get_by_role("heading", name="Sea surface", exact=True)).to_be_visible()
    expect(page.locator("#linked-collections")).to_have_text("Sea surface temperature")
    expect(page.locator("#linked-items")).to_have_text(NORTH_SEA_2022)
    expect(page.locator(".meta").get_by_text("project ocean-lab")).to_be_visible()  # inherited
    s.shot("catalog-child")
    # a duplicate id: the API's 409, next to the form
    page.get_by_role("link", name="ocean", exact=True).click()
    create = page.locator("#create-catalog")
    create.get_by_label("Id").fill("sst")
    create.get_by_label("Description").fill("again")
    s.provoked = {409}
    create.get_by_role("button", name="Create sub-catalog").click()
    expect(create.locator(".error")).to_contain_text("already")
    s.provoked = set()
    s.shot("catalog-conflict")
    # a catalog made with the form's defaults is hers alone, as the form says
    page.get_by_role("banner").get_by_role("link", name="Catalogs", exact=True).click()
    create = page.locator("#create-catalog")
    create.get_by_label("Id").fill("drafts")
    create.get_by_label("Description").fill("Not yet")
    s.provoked = {404}  # its page as anyone gets it first: a 404, then hers
    create.get_by_role("button", name="Create catalog").click()
    expect(page.locator("#catalog-readers")).to_have_text(
        "read by only its owner (and administrators)")
    s.provoked = set()
    assert httpx.get(f"{web_server}/data/catalogs/drafts").status_code == 404

    # the tree in STAC Browser, by its child links
    s.goto("/browser/catalogs")
    page.get_by_text("Ocean lab", exact=True).click()
    expect(page.get_by_text("Our data")).to_be_visible()
    page.wait_for_timeout(500)
    s.shot("tree-xss")
    assert page.evaluate("window.__pwned") is None
    page.get_by_text("Sea surface", exact=True).click()
    expect(page.get_by_role("heading", name="Sea surface", exact=True)).to_be_visible()
    expect(page.get_by_text("Sea surface temperature", exact=True).first).to_be_visible()
    s.shot("catalog-tree")

    # echo from its form: the result, shown as text
    s.goto("/ui/processes/echo")
    run = page.locator("#execute")
    run.get_by_label("message").fill(PAYLOAD)
    run.get_by_label("object").fill('{"depth": 10}')
    run.get_by_role("button", name="Run").click()
    expect(page.locator("#job-status")).to_have_text("successful")
    expect(page.locator("#result-values")).to_contain_text(PAYLOAD)
    expect(page.locator("#result-values")).to_contain_text('{"depth":10}')
    assert page.evaluate("window.__pwned") is None
    s.shot("echo-result")

    # a process deployed for her project (CWL): listed for her, run from its form
    s.goto("/ui/processes")
    deployed = page.locator("#process-list tr", has_text="Shout")
    expect(deployed).to_contain_text("deployed")
    deployed.get_by_role("link").click()
    page.locator("#execute").get_by_label("What to shout").fill("ahoy")
    page.locator("#execute").get_by_role("button", name="Run").click()
    expect(page.locator("#job-status")).to_have_text("successful", timeout=60_000)
    expect(page.locator("#result-values")).to_contain_text("AHOY AHOY")
    expect(page.locator("#job-log")).to_contain_text("started 0")
    s.shot("deployed-process")
    # a file input: an address, a text, or a file from her computer (uploaded as its text)
    s.goto("/ui/processes/lab-word-count")
    expect(page.locator(".meta")).to_contain_text(
        "answers at once, runs as a job you can watch, can be stopped")
    form = page.locator("#execute")
    form.get_by_label("or a text file from your computer").set_input_files(files=[{
        "name": "notes.txt", "mimeType": "text/plain", "buffer": b"one two three four\n"}])
    form.get_by_role("button", name="Run").click()
    expect(page.locator("#job-status")).to_have_text("successful", timeout=60_000)
    expect(page.locator("#results")).to_contain_text("4")
    s.shot("file-input")
    # a run cwltool fails says what failed, on one line; the log has the rest, no traceback
    s.goto("/ui/processes/lab-misreferenced")
    page.locator("#execute").get_by_label("message").fill("hi")
    page.locator("#execute").get_by_role("button", name="Run").click()
    expect(page.locator("#job-status")).to_have_text("failed", timeout=60_000)
    expect(page.locator("#job-error")).to_have_text(  # line 8, column 13: the reference
        "package.cwl:8:13: Expression evaluation error: Syntax error in parameter reference "
        "'inputs.nothing.basename': inputs does not contain key 'nothing'.. This could be due "
        "to using Javascript code without specifying InlineJavascriptRequirement.")
    expect(page.locator("#job-log")).to_contain_text("does not contain key 'nothing'")
    expect(page.locator("#job-log")).not_to_contain_text("Traceback")
    s.shot("job-failed")

    # sleep: the progress bar moves; another sleep is dismissed while it runs
    s.goto("/ui/processes/sleep")
    page.locator("#execute").get_by_label("seconds").fill("99999")  # over its maximum
    s.provoked = {400}
    page.locator("#execute").get_by_role("button", name="Run").click()
    expect(page.locator("#execute-error")).to_contain_text("seconds: must be at most 3600")
    s.provoked = set()
    s.shot("form-error")
    assert urlsplit(page.url).path == "/ui/processes/sleep"  # no job: nothing half-done
    page.locator("#execute").get_by_label("seconds").fill("3")
    page.locator("#execute").get_by_role("button", name="Run").click()
    progress = page.locator("#job-progress")
    expect(page.locator("#job-status")).to_have_text("running", timeout=20_000)
    seen, logged_while_running = set(), False
    while (status := page.locator("#job-status").inner_text()) not in ("successful", "failed"):
        seen.add(int(progress.get_attribute("value") or 0))
        logged_while_running |= status == "running" and "slept" in (
            page.locator("#job-log").text_content() or "")
        page.wait_for_timeout(200)
    expect(page.locator("#job-status")).to_have_text("successful")
    assert any(0 < v < 100 for v in seen), seen
    expect(progress).to_have_attribute("value", "100")
    # its log, shown as it grew
    assert logged_while_running
    expect(page.locator("#job-log")).to_be_visible()
    expect(page.locator("#job-log")).to_contain_text("slept 0.25s of 3s\n")
    assert page.locator("#job-log").text_content().endswith("slept 3.00s of 3s\n")
    s.shot("sleep-done")
    s.goto("/ui/processes/sleep")
    page.locator("#execute").get_by_label("seconds").fill("120")
    page.locator("#execute").get_by_role("button", name="Run").click()
    expect(page.locator("#job-status")).to_have_text(re.compile("accepted|running"))
    page.get_by_role("button", name="Dismiss").click()
    expect(page.locator("#dismiss-question")).to_have_text(re.compile(
        r"^(Dismiss this job\? It will not run\.|Stop this job and dismiss it\? .*)$"))
    page.get_by_role("button", name="Dismiss the job").click()
    expect(page.locator("#job-status")).to_have_text("dismissed")
    s.shot("sleep-dismissed")

    # the job list, filtered
    page.get_by_role("link", name="All your jobs").click()
    rows = page.locator("#jobs tbody tr")
    # echo, three deployed processes (one failed) and sleep; a dismissed job is gone (OGC)
    expect(rows).to_have_count(5)
    expect(rows.first).to_contain_text("sleep")  # newest first
    page.get_by_label("Status").select_option("failed")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("package.cwl:8:13: Expression evaluation error")
    page.get_by_label("Status").select_option("successful")
    expect(rows).to_have_count(4)
    s.shot("jobs")

    # someone else's catalog: no form to change it, and a sentence saying who may
    s.goto("/ui/catalogs/carols")
    expect(page.locator("#not-yours")).to_have_text(
        "Only its owner (carol) and administrators may change this catalog.")
    expect(page.locator("#catalog-actions")).to_be_hidden()
    s.shot("not-yours")

    # edit, replace links (refused until confirmed: the API's 400, nothing changed), delete
    # the subtree (listed first; refused until confirmed: the API's 409)
    s.goto("/ui/catalogs/ocean")
    page.locator("#edit-catalog").get_by_label("Description").fill("What the ocean lab uses")
    page.locator("#edit-catalog").get_by_role("button", name="Save").click()
    expect(page.locator("#catalog-description")).to_have_text("What the ocean lab uses")
    s.goto("/ui/catalogs/ocean/sst")
    replace = page.locator("#replace-links")
    replace.get_by_label("One collection id").fill(SST)
    s.provoked = {400}
    replace.get_by_role("button", name="Replace links").click()
    expect(replace.locator(".error")).to_have_text(
        "Nothing was changed: tick \u201cI understand\u201d above to replace the links.")
    page.reload()
    expect(page.locator("#linked-items li")).to_have_count(1)
    replace = page.locator("#replace-links")
    replace.get_by_label("One collection id").fill(SST)
    replace.get_by_label("I understand").check()
    replace.get_by_role("button", name="Replace links").click()
    expect(page.locator("#linked-items")).to_have_text("none")
    expect(page.locator("#linked-collections")).to_have_text("Sea surface temperature")
    s.goto("/ui/catalogs/ocean")
    delete = page.locator("#delete-catalog")
    expect(delete.locator("#subtree")).to_have_text("ocean/sst")
    s.provoked = {409}
    delete.get_by_role("button", name="Delete catalog").click()
    expect(delete.locator(".error")).to_have_text(
        "Nothing was deleted: tick the box above to confirm what goes with this catalog.")
    s.shot("delete-refused")
    delete.get_by_label("Delete this catalog and").check()
    delete.get_by_role("button", name="Delete catalog").click()
    expect(page.get_by_role("heading", name="Catalogs", exact=True)).to_be_visible()
    expect(page.get_by_text("Ocean lab", exact=True)).to_have_count(0)  # gone, subtree too
    # a catalog of links only: the same confirmation, saying what goes (links, not data)
    s.provoked = {404, 409}  # hers alone (the form's default): anyone's view of it is a 404
    create = page.locator("#create-catalog")
    create.get_by_label("Id").fill("picks")
    create.get_by_label("Description").fill("A few favourites")
    create.get_by_label("Collections and items").fill(
        f"{SST}\n{SST}/sea_surface_temperature-north-sea-2022")
    create.get_by_role("button", name="Create catalog").click()
    delete = page.locator("#delete-catalog")
    expect(delete.locator("#links-go")).to_have_text(
        "Its links to 1 collection and 1 item go with it; the collections and items "
        "themselves stay in the catalog.")
    expect(delete).to_be_visible()  # the page as she reads it (forms show then)
    delete.scroll_into_view_if_needed()
    s.shot("delete-links")
    delete.get_by_role("button", name="Delete catalog").click()
    expect(delete.locator(".error")).to_have_text(
        "Nothing was deleted: tick the box above to confirm what goes with this catalog.")
    delete.get_by_label("Delete this catalog, with its 2 links.").check()
    delete.get_by_role("button", name="Delete catalog").click()
    expect(page.get_by_role("heading", name="Catalogs", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="picks")).to_have_count(0)
    s.provoked = set()

    # sign out: protected pages ask to sign in again
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    s.goto("/ui/jobs")
    expect(page.get_by_text("Sign in to see your jobs.")).to_be_visible()
    expect(page.locator("#jobs tbody tr")).to_have_count(0)
    s.shot("signed-out")
    # signed out, her private item is gone: the API answers as for a missing item
    s.provoked = {404}
    s.goto(f"/browser/collections/{SST}/items/{DRAFT}")
    expect(page.get_by_text("There is nothing here that you may read. If it is private or a "
                            "project's, sign in to see it.")).to_be_visible()
    expect(page.get_by_text("contact the service operator")).to_have_count(0)
    expect(page.get_by_role("heading", name=DRAFT_TITLE)).to_have_count(0)
    expect(page.locator("#geocatalog-bar-user")).to_have_count(0)
    expect(page.locator("#geocatalog-bar").get_by_role("link", name="Sign in")).to_be_visible()
    s.provoked = set()
    s.shot("private-signed-out")
    s.goto("/ui/catalogs")
    expect(page.locator("#top-catalogs")).to_contain_text("carols")
    expect(page.locator("#top-catalogs")).not_to_contain_text(NOTES)
    s.provoked = {404}
    s.goto("/ui/catalogs/alices-notes")
    expect(page.locator("#catalog-page")).to_contain_text(
        "Catalog alices-notes does not exist.")
    expect(page.get_by_role("heading", name=NOTES)).to_have_count(0)
    s.provoked = set()
    s.goto("/ui/catalogs/field-trip")  # what anyone reads of it
    expect(page.get_by_role("heading", name="Field trip")).to_be_visible()
    expect(page.locator("#sub-catalogs")).to_have_text("none")
    expect(page.locator("#linked-items")).to_have_text("none")
    expect(page.locator("#catalog-actions")).to_be_hidden()

    # signing in from the bar over STAC Browser: back to the page it was on, signed in, and
    # our pages see the same session (STAC Browser has no sign-in of its own)
    s.goto("/browser/collections/" + SST)
    expect(page.get_by_role("button", name="Log in")).to_have_count(0)
    page.locator("#geocatalog-bar").get_by_role("link", name="Sign in").click()
    page.get_by_label("User name").fill("alice")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#geocatalog-bar-user")).to_have_text("Signed in as alice")
    assert urlsplit(page.url).path == f"/browser/collections/{SST}"
    s.shot("stac-browser-signed-in")
    # signed in, STAC Browser reads as her: her private item is found, and still after a
    # page load
    page.get_by_role("link", name="Search").first.click()
    search_by_words(page, "draft")
    expect(page.get_by_role("heading", name=DRAFT_TITLE)).to_be_visible()
    s.shot("private-in-stac-browser")
    s.goto(f"/browser/collections/{SST}/items/{DRAFT}")
    expect(page.get_by_role("heading", name=DRAFT_TITLE)).to_be_visible()
    s.goto("/ui/jobs")
    expect(page.get_by_text("Signed in as alice")).to_be_visible()

    # both APIs' documentation, from the service's own files (nothing outside is reached)
    for path, title in (("/data/api.html", "geocatalog"),
                        ("/processes/api.html", "geocatalog processes")):
        s.goto(path)
        expect(page.locator(".swagger-ui .info .title")).to_contain_text(title)
        expect(page.locator(".swagger-ui .opblock").first).to_be_visible()
    s.shot("api-docs")

    context.close()
    assert not s.errors, s.errors
    assert {urlsplit(u).hostname for u in s.outside} <= OUTSIDE_ALLOWED, s.outside
