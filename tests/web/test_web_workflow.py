"""What the web face adds for the workflow, over HTTP: a job's provenance page, the deploy
form, who reads each entry of search results and catalog lists, the Variables field taking
words, item links titled, a hidden catalog's page in words, a search that finds nothing
saying so, the landing's process count as the caller's. (Pages render as the browser's session
reads, and a bearer token of the web client reads the same; what a page offers follows the
session's user.) In Chromium: test_session_browser.py."""

from __future__ import annotations

import html
import json
import re

import httpx
import pytest

from process_api.jobs.provenance import provenance
from stac_ext.web import provenance as prov_words
from tests.support.http import http_client
from tests.support.issuer import TestIssuer
from tests.support.jobs import wait_for
from tests.support.sessions import session_headers
from tests.support.stac import make_item, unique
from tests.web.conftest import LOCAL_BASE

HTML = {"Accept": "text/html"}
DEPLOY = "deployProcess"


def web_token(issuer: TestIssuer, user: str, groups: list[str] | None = None,
              rights: list[str] | None = None) -> str:
    """A token of the web client, as a browser's session holds it (both APIs' audience)."""
    claims = issuer.claims(user, client="geocatalog-web", groups=groups, rights=rights)
    return issuer.sign({**claims, "aud": ["geocatalog", "geocatalog-processes"]})


def text_of(page: str) -> str:
    """A page's text, tags out, spaces folded (none before punctuation)."""
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    return re.sub(r" ([,.:;])", r"\1", text)


@pytest.mark.unit
def test_a_jobs_provenance_in_words() -> None:
    job = {"id": "j1", "owner": "alice", "project": "ocean-lab", "status": "successful",
           "process_id": "sst-mean", "process_revision": 2,
           "started": "2026-01-01T10:00:00+00:00", "finished": "2026-01-01T10:01:00+00:00",
           "provenance": {
               "inputs": [{"href": f"s3://b/sst-0{n}.nc", "checksum": "1220" + "ab" * 32,
                           "size": 1000 * n, "input": "files",
                           "item": f"https://x/data/collections/c/items/sst-0{n}",
                           "asset": "data", "type": "application/x-netcdf"}
                          for n in (2, 1)],
               "outputs": [{"href": "s3://b/out/mean.nc", "checksum": "1220" + "cd" * 32,
                            "size": 4242, "output": "mean"}],
               "published": [{"url": "https://x/data/collections/c/items/mean",
                              "file": "s3://b/out/mean.nc"}]}}
    read = prov_words.read_document(json.loads(provenance(job, "https://x/processes/")))
    assert {k: read[k] for k in ("owner", "process", "revision", "status", "project")} == {
        "owner": "alice", "process": "sst-mean", "revision": 2, "status": "successful",
        "project": "ocean-lab"}
    assert read["started"].startswith("2026-01-01T10:00:00")
    assert [(f["href"], f["name"], f["item"], f["asset"], f["size"], f["checksum"])
            for f in read["inputs"]] == [
        ("s3://b/sst-02.nc", "files", "https://x/data/collections/c/items/sst-02", "data",
         2000, "sha256:" + "ab" * 32),
        ("s3://b/sst-01.nc", "files", "https://x/data/collections/c/items/sst-01", "data",
         1000, "sha256:" + "ab" * 32)]
    assert [(f["href"], f["name"], f["size"]) for f in read["outputs"]] == [
        ("s3://b/out/mean.nc", "mean", 4242)]
    assert read["published"] == ["https://x/data/collections/c/items/mean"]
    assert prov_words.read_document("not a document")["inputs"] == []


async def test_the_provenance_page(app, issuer: TestIssuer, anon: httpx.AsyncClient) -> None:
    """`/processes/jobs/{id}/prov` in a browser: the page, as its owner reads it; others
    are told what they need."""
    token = web_token(issuer, "alice")
    async with http_client(app, token) as alice:
        r = await alice.post("/processes/processes/echo/execution",
                             json={"processInputs": {"message": "hi"}})
        assert r.status_code == 201, r.text
        job = r.headers["Location"]
        await wait_for(alice, job, "successful")
        page = await alice.get(f"{job}/prov", headers=HTML)
        early = await alice.get(job.rsplit("/", 1)[0] + "/no-such-job/prov", headers=HTML)
    assert page.status_code == 200, page.text
    said = text_of(page.text)
    assert "alice ran the process echo" in said and ": successful." in said
    assert "What it read No file: its inputs were values only." in said
    assert f'href="http://testserver/processes/jobs/{job.rsplit("/", 1)[1]}/prov?f=json"' \
        in page.text
    assert "eyJ" not in page.text  # no token in the page
    assert early.status_code == 404
    r = await anon.get(f"{job}/prov", headers=HTML)
    assert r.status_code == 401
    assert "Sign in to see this job's provenance." in text_of(r.text)


async def test_the_deploy_form(signing_in: httpx.AsyncClient) -> None:
    """Offered to whoever may deploy; to one signed in without the right, which right and
    how it is had."""
    r = await signing_in.get("/ui/deploy")
    assert "Sign in to deploy a process." in text_of(r.text)
    assert 'id="deploy-form"' not in r.text
    bob = await session_headers(signing_in, "bob")
    page = text_of((await signing_in.get("/ui/deploy", headers=bob)).text)
    listed = (await signing_in.get("/ui/processes", headers=bob)).text
    assert (f"Deploying needs the right {DEPLOY}, which your sign-in does not hold: sign out, "
            "then sign in again choosing that right.") in page
    assert 'id="to-deploy"' not in listed
    dora = await session_headers(signing_in, "dora", "ocean-lab", DEPLOY)
    form = (await signing_in.get("/ui/deploy", headers=dora)).text
    listed = (await signing_in.get("/ui/processes", headers=dora)).text
    assert 'id="deploy-form"' in form and '<option value="public">' not in form
    assert f'src="{LOCAL_BASE}/ui/static/deploy.js"' in form
    assert f'href="{LOCAL_BASE}/ui/deploy" id="to-deploy"' in listed
    # the local issuer's form names the right
    authorize = await signing_in.get("/ui/session/sign-in")
    sign_in_form = await signing_in.get(authorize.headers["location"])
    assert "<code>deployProcess</code> deploys processes" in sign_in_form.text


async def test_the_landing_counts_what_the_caller_may_run(signing_in: httpx.AsyncClient
                                                          ) -> None:
    process = unique("landing-")
    erin = await session_headers(signing_in, "erin", rights=DEPLOY)
    r = await signing_in.post("/processes/processes", content=_tool(process),
                              headers={**erin, "Content-Type": "application/cwl+yaml"})
    assert r.status_code == 201, r.text
    hers = await signing_in.get("/", headers={**erin, **HTML})
    listed = len((await signing_in.get("/processes/processes", headers=erin)).json()[
        "processes"])
    anyone = len((await signing_in.get("/processes/processes")).json()["processes"])
    assert f"{listed} processes; run them" in text_of(hers.text)
    assert f"{anyone} processes; run them" in text_of(
        (await signing_in.get("/", headers=HTML)).text)
    assert listed == anyone + 1


def _tool(process_id: str) -> str:
    return (f"cwlVersion: v1.2\nclass: CommandLineTool\nid: {process_id}\nbaseCommand: "
            "[echo]\ninputs: {}\noutputs: []\n")


async def test_who_reads_each_entry(app, issuer: TestIssuer, collection: str,
                                    anon: httpx.AsyncClient) -> None:
    """Search results and catalog lists say who reads each entry; item links in a
    catalog carry their item's title."""
    token = web_token(issuer, "fay", groups=["ocean-lab"])
    words = unique("readers")
    async with http_client(app, token) as fay:
        for n, (visibility, extra) in enumerate((("public", {}), ("private", {}),
                                                 ("project", {"project": "ocean-lab"}))):
            item = make_item(f"{words}-{n}", collection_id=collection, day=n + 1)
            item["properties"].update(title=f"{words} {visibility}", visibility=visibility,
                                      **extra)
            r = await fay.post(f"/data/collections/{collection}/items", json=item)
            assert r.status_code == 201, r.text
        top = unique("readers-")
        href = f"http://testserver/data/collections/{collection}/items/{words}-0"
        for body in ({"id": top, "links": [{"rel": "item", "href": href}]},
                     {"id": "mine", "visibility": "private"},
                     {"id": "ours", "visibility": "project", "project": "ocean-lab"}):
            where = "" if body["id"] == top else f"/{top}"
            r = await fay.post(f"/data/catalogs{where}", json={
                "type": "Catalog", "description": "d", **body})
            assert r.status_code == 201, r.text
        results = (await fay.get(f"/ui/search?q={words}")).text
        catalog = (await fay.get(f"/ui/catalogs/{top}")).text
        listed = text_of((await fay.get("/ui/catalogs")).text)
    assert "Item Variable Time Who reads it Data" in text_of(results)
    rows = {text_of(row).split(" ")[1]: text_of(cells)
            for row, cells in re.findall(r"<tr><td>(.*?)</td>.*?<td class=\"readers-cell\">"
                                         r"(.*?)</td>", results)}
    assert rows == {"public": "anyone", "private": "only its owner",
                    "project": "project ocean-lab"}
    sub = text_of(re.search(r'<ul id="sub-catalogs">.*?</ul>', catalog, re.S).group(0))
    assert sub == f"{top}/mine only its owner {top}/ours project ocean-lab"
    items = text_of(re.search(r'<ul id="linked-items">.*?</ul>', catalog, re.S).group(0))
    assert items == f"{words} public"  # its title, not "collection / id"
    assert f"{top} anyone" in listed
    # the API's links say the same: who reads a sub-catalog that not anyone reads
    r = await anon.get(f"/data/catalogs/{top}")
    assert [link for link in r.json()["links"] if link["rel"] == "child"] == []


async def test_a_search_in_words(app, issuer: TestIssuer, collection: str,
                                 anon: httpx.AsyncClient) -> None:
    """The Variables field takes a variable's name (its id offered as a completion); a
    search that finds nothing says so; an unknown name is said."""
    token = web_token(issuer, "gus")
    async with http_client(app, token) as gus:
        item = make_item(unique("w-"), collection_id=collection)
        assert (await gus.post(f"/data/collections/{collection}/items",
                               json=item)).status_code == 201
        name = collection.split("-", 1)[1].replace("_", " ")  # its standard name in words
        page = await gus.get("/ui/search", params={"collections": name.upper()})
        nothing = await gus.get("/ui/search", params={"q": unique("nothing-")})
        unknown = await gus.get("/ui/search", params={"collections": "no such variable"})
    assert page.status_code == 200
    assert f'<option value="{collection}">' in page.text  # the completion
    assert f'value="{name.upper()}"' in page.text  # the field keeps what was typed
    said = text_of(page.text)
    assert "1 item matches; 1 on this page." in said
    assert f'title="{collection}"' in page.text
    assert f"collections={collection}" in page.text  # the query sent: the id
    nothing_said = text_of(nothing.text)
    assert "No item matches this search." in nothing_said
    assert "<table" not in nothing.text.split('id="search-results"')[1]
    assert "No variable is named “no such variable”" in text_of(unknown.text)


async def test_a_hidden_catalog_in_words(app, issuer: TestIssuer) -> None:
    async with http_client(app, web_token(issuer, "hal")) as hal:
        r = await hal.get(f"/ui/fragments/catalogs/{unique('gone-')}")
        page = await hal.get(f"/ui/catalogs/{unique('gone-')}", headers=HTML)
    assert r.status_code == 404
    assert "<h1>Not found</h1>" in r.text and "NotFoundError" not in r.text
    assert page.status_code == 404 and "NotFoundError" not in page.text
