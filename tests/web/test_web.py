"""The web face over HTTP: content negotiation, STAC Browser's serve-time configuration, the
local issuer's browser sign-in (code + PKCE), escaping and the pages' security headers.
The same pages in a real browser: tests/web/test_web_browser.py."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import logging
import logging.config
import re
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from process_api.data.file_inputs import FILE_INPUT
from stac_ext.platform.service.logs import logging_config
from stac_ext.settings import Settings
from stac_ext.web.pages.search import typed_datetime
from stac_ext.web.schema_form import form_fields, label_of
from stac_ext.web.templating import prose
from tests.support.http import http_client
from tests.support.issuer import TestIssuer
from tests.support.stac import make_item, unique

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
PAYLOAD = "<script>alert(1)</script>"


async def test_json_clients_see_no_change(anon: httpx.AsyncClient, collection: str) -> None:
    for accept in ({}, {"Accept": "application/json"}, {"Accept": "*/*"},
                   {"Accept": "application/geo+json, text/html;q=0.5"}):
        r = await anon.get(f"/data/collections/{collection}/items", headers=accept)
        assert r.status_code == 200, (accept, r.text)
        assert r.headers["content-type"] == "application/geo+json"
        assert "Accept" in r.headers["vary"]  # a cache keeps the JSON and the redirect apart
    r = await anon.get("/", headers={"Accept": "application/json"})
    assert r.json()["links"][1]["rel"] == "data"


async def test_f_json_everywhere(anon: httpx.AsyncClient, collection: str) -> None:
    for path in ("/", "/data/", "/data/conformance", "/data/collections",
                 f"/data/collections/{collection}", f"/data/collections/{collection}/items",
                 "/data/search", "/data/catalogs", "/processes/", "/processes/processes"):
        r = await anon.get(path, params={"f": "json"}, headers=HTML)
        assert r.status_code == 200, (path, r.text)
        assert r.headers["content-type"].startswith("application/"), path


async def test_browsers_go_to_stac_browser(anon: httpx.AsyncClient, collection: str) -> None:
    for path, target in (
            ("/data/", "/browser/"), ("/data", "/browser/"),
            (f"/data/collections/{collection}", f"/browser/collections/{collection}"),
            (f"/data/collections/{collection}/items?limit=5",
             f"/browser/collections/{collection}/items?limit=5"),
            ("/data/catalogs/a/b", "/browser/catalogs/a/b"),
            ("/data/search", "/browser/search"), ("/data/api", "/data/api.html")):
        r = await anon.get(path, headers=HTML)
        assert (r.status_code, r.headers["location"]) == (303, target), path
        assert r.headers["vary"] == "Accept"
    r = await anon.get(f"/data/collections/{collection}?f=html")  # no Accept needed
    assert (r.status_code, r.headers["location"]) == (303, f"/browser/collections/{collection}")
    # a POST is never redirected
    r = await anon.post("/data/search", json={"limit": 1}, headers=HTML)
    assert r.status_code == 200


async def test_landing_and_process_pages_answer_html(anon: httpx.AsyncClient) -> None:
    r = await anon.get("/", headers=HTML)
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert "Browse and search the catalog" in r.text
    assert 'href="http://testserver/ui/processes"' in r.text
    csp = r.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp
    for path, text in (("/processes/", "<h1>Processes</h1>"),
                       ("/processes/processes", "<h1>Processes</h1>"),
                       ("/processes/processes/echo", 'data-fragment="http://testserver/ui/'
                                                     'fragments/processes/echo"'),
                       ("/processes/jobs", "<h1>Your jobs</h1>"),
                       ("/processes/jobs/x1/results", 'data-job="x1"'),
                       ("/processes/conformance", "ogcapi-processes-1/1.0/conf/core"),
                       ("/data/conformance", "ogcapi-features-1/1.0/conf/core")):
        r = await anon.get(path, headers=HTML)
        assert r.status_code == 200, path
        assert text in r.text, path
    r = await anon.get("/processes/api", headers=HTML)
    assert (r.status_code, r.headers["location"]) == (303, "/processes/api.html")


async def test_process_form_comes_with_the_callers_token(
        anon: httpx.AsyncClient, issuer: TestIssuer) -> None:
    r = await anon.get("/ui/fragments/processes/echo")
    assert (r.status_code, r.text) == (
        401, '<h1>Unauthorized</h1>\n<p class="error">Authentication required: no token.</p>')
    token = issuer.token("alice", client="geocatalog-processes")
    r = await anon.get("/ui/fragments/processes/echo",
                       headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    assert '<form id="execute" data-process="echo"' in r.text
    assert 'data-path="[&#34;resources&#34;, &#34;limits&#34;, &#34;memory&#34;]"' in r.text
    # the optional block of tuning knobs comes folded, after the inputs a person gives
    folded = r.text.index('<details class="folded"><summary>Resources (optional)</summary>')
    assert r.text.index('id="in-message"') < folded
    r = await anon.get("/ui/fragments/processes/nope",
                       headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 404
    assert "nope" in r.text


def test_form_fields_from_a_schema() -> None:
    fields = form_fields({
        "type": "object", "required": ["name", "mode"],
        "$defs": {"secret": {"type": "string", "writeOnly": True, "default": "hunter2"}},
        "properties": {
            "name": {"type": "string", "title": "Name", "maxLength": 20, "default": "x"},
            "mode": {"enum": ["fast", "exact"], "default": "exact"},
            "count": {"type": ["integer", "null"], "minimum": 1},
            "flag": {"type": "boolean", "default": True},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["a", "b"]},
            "shape": {"oneOf": [{"type": "string"}, {"type": "number"}]},
            "data": FILE_INPUT, "more": {"type": "array", "items": FILE_INPUT},
            "access": {"type": "object", "required": ["key"], "properties": {
                "key": {"$ref": "#/$defs/secret"}, "region": {"type": "string"}}},
        }})
    by_name = {f.name: f for f in fields}
    assert [(f.name, f.kind, f.required) for f in fields] == [
        ("name", "string", True), ("mode", "enum", True), ("count", "integer", False),
        ("flag", "boolean", False), ("tags", "lines", False), ("shape", "json", False),
        ("data", "file", False), ("more", "files", False), ("access", "object", False)]
    assert by_name["name"].attributes == {"maxLength": 20}
    assert by_name["count"].attributes == {"minimum": 1}
    assert by_name["tags"].default_text == "a\nb"
    key, region = by_name["access"].children
    assert (key.name, key.kind, key.required, key.default_text) == \
        ("access.key", "password", True, "")  # a secret's default is never shown
    assert (region.path, region.kind) == (["access", "region"], "string")
    # labels: the schema's title, else the key as words; descriptions' `code` shown as code
    assert by_name["name"].label == "Name" and by_name["access"].label == "Access"
    assert [label_of(k) for k in ("accessKeyId", "friendly_name", "cpu")] == [
        "Access key ID", "Friendly name", "CPU"]
    assert str(prose("a `s3://b` <i>")) == "a <code>s3://b</code> &lt;i&gt;"
    # an optional group is folded; what must be given never is
    assert [f.name for f in fields if f.folded] == ["access"]
    assert not key.folded and not form_fields({"type": "object", "required": ["a"],
                                               "properties": {"a": {"type": "object",
                                                                    "properties": {}}}})[0].folded


async def test_user_text_is_escaped_and_no_inline_script(
        app, issuer: TestIssuer, admin_data: httpx.AsyncClient, collection: str) -> None:
    catalog = unique("xss-")
    async with http_client(app, issuer.token("alice")) as alice:
        r = await alice.post("/data/catalogs", json={
            "id": catalog, "type": "Catalog", "title": f"T {PAYLOAD}",
            "description": f"D {PAYLOAD}", "links": [
                {"rel": "item", "href": f"http://testserver/data/collections/{collection}"
                                        f"/items/x1"}]})
        assert r.status_code == 400  # no such item yet: nothing stored
        item = make_item("x1")
        item["properties"]["title"] = PAYLOAD
        assert (await alice.post(f"/data/collections/{collection}/items",
                                 json=item)).status_code == 201
        r = await alice.post("/data/catalogs", json={
            "id": catalog, "type": "Catalog", "title": f"T {PAYLOAD}",
            "description": f"D {PAYLOAD}", "links": [
                {"rel": "item", "href": f"http://testserver/data/collections/{collection}"
                                        f"/items/x1", "title": PAYLOAD}]})
        assert r.status_code == 201, r.text
        page = (await alice.get(f"/ui/catalogs/{catalog}")).text
    assert "<script>alert" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 4  # title x2, text, item
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.S)
    # our own files, and the settings as data (not run): no inline script at all
    assert all('src="' in attrs or 'type="application/json"' in attrs
               for attrs, _ in scripts), scripts


async def test_stac_browser_is_configured_at_serve_time(anon: httpx.AsyncClient,
                                                        settings: Settings) -> None:
    r = await anon.get("/browser/config.js")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/javascript")
    assert '"catalogUrl": "http://testserver/data/"' in r.text
    assert '"pathPrefix": "/browser/"' in r.text
    # no sign-in of its own: the service's session reads for it (tests/web/test_sessions.py)
    assert '"authConfig": null' in r.text and "token" not in r.text.lower()
    assert '"allowExternalAccess": false' in r.text
    for path in ("/browser/", "/browser/collections/x/items/y", "/browser/auth"):
        r = await anon.get(path)
        assert r.status_code == 200, path
        assert '<head><base href="http://testserver/browser/"><script defer="defer" ' \
               'src="config.js"></script>' in r.text
        # the way back to our pages, above STAC Browser
        bar = re.search(r'<nav id="geocatalog-bar".*?</nav><div id="stac-browser">', r.text)
        assert bar is not None, path
        assert re.findall(r'href="([^"]+)">([^<]+|<b>geocatalog</b>)</a>', bar.group(0)) == [
            ("http://testserver/", "<b>geocatalog</b>"),
            ("http://testserver/ui/catalogs", "Catalogs"),
            ("http://testserver/ui/processes", "Processes"), ("http://testserver/ui/jobs", "Jobs"),
            ("http://testserver/ui/session/sign-in", "Sign in")]
    assets = re.findall(r'src="(js/app\.[0-9a-f]+\.js)"', r.text)
    r = await anon.get(f"/browser/{assets[0]}")
    assert r.status_code == 200
    assert "immutable" in r.headers["cache-control"]
    r = await anon.get("/browser/..%2F..%2Fpyproject.toml")
    assert "[project]" not in r.text
    r = await anon.get("/browser")
    assert (r.status_code, r.headers["location"]) == (308, "http://testserver/browser/")


async def test_stac_browser_behind_a_base_url(service_app) -> None:
    async with service_app(base_url="https://maps.example/geo") as service:
        c = service.client()
        config = (await c.get("/browser/config.js")).text
        index = (await c.get("/browser/collections/x")).text
        redirect = await c.get("/data/collections/x", headers=HTML)
    assert '"catalogUrl": "https://maps.example/geo/data/"' in config
    assert '"pathPrefix": "/geo/browser/"' in config
    assert '<base href="https://maps.example/geo/browser/">' in index
    assert redirect.headers["location"] == "/geo/browser/collections/x"


def _pkce() -> tuple[str, str]:
    verifier = base64.urlsafe_b64encode(b"v" * 40).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(
        hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


@pytest.fixture
async def local(service_app, tmp_path) -> AsyncIterator[httpx.AsyncClient]:
    """The service with its development issuer (no OIDC_ISSUER), at its own address."""
    async with service_app(oidc_issuer=None, geocatalog_data_dir=tmp_path) as service:
        yield service.client(base_url="http://127.0.0.1:8080")


async def test_sign_in_with_code_and_pkce(local: httpx.AsyncClient) -> None:
    discovery = (await local.get("/auth/.well-known/openid-configuration")).json()
    assert discovery["authorization_endpoint"] == "http://127.0.0.1:8080/auth/authorize"
    assert discovery["token_endpoint"] == "http://127.0.0.1:8080/auth/token"
    assert discovery["code_challenge_methods_supported"] == ["S256"]
    verifier, challenge = _pkce()
    redirect = "http://127.0.0.1:8080/ui/session/callback"
    query = {"client_id": "geocatalog-web", "redirect_uri": redirect, "response_type": "code",
             "state": "s1", "nonce": "n1", "code_challenge": challenge,
             "code_challenge_method": "S256", "scope": "openid"}
    form = await local.get("/auth/authorize", params=query)
    assert form.status_code == 200
    assert "DEVELOPMENT ONLY." in form.text
    assert "form-action 'self'" in form.headers["content-security-policy"]

    r = await local.post("/auth/authorize", data={
        **{k: query[k] for k in ("client_id", "redirect_uri", "state", "nonce",
                                 "code_challenge")},
        "username": "alice", "groups": "ocean-lab, lab2", "rights": "updateCatalog"})
    assert r.status_code == 303
    back = urlsplit(r.headers["location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == redirect
    answer = parse_qs(back.query)
    assert answer["state"] == ["s1"]
    code = answer["code"][0]

    exchange = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
                "client_id": "geocatalog-web"}
    wrong = await local.post("/auth/token", data={**exchange, "code_verifier": "x" * 43})
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    r = await local.post("/auth/token", data={**exchange, "code_verifier": verifier})
    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "no-store"
    tokens = r.json()
    assert tokens["token_type"] == "Bearer"
    again = await local.post("/auth/token", data={**exchange, "code_verifier": verifier})
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")

    # one token, both APIs: the web client's token names both as audiences
    bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
    r = await local.post("/data/catalogs", headers=bearer, json={
        "id": unique("web-"), "type": "Catalog", "description": "d", "project": "ocean-lab"})
    assert r.status_code == 201, r.text
    assert r.json()["owner"] == "alice"
    r = await local.get("/processes/processes/echo", headers=bearer)
    assert r.status_code == 200, r.text

    r = await local.get("/auth/logout", params={
        "post_logout_redirect_uri": "http://127.0.0.1:8080/", "state": "s2"})
    assert (r.status_code, r.headers["location"]) == (303, "http://127.0.0.1:8080/?state=s2")


async def test_sign_in_refuses_foreign_clients_and_addresses(local: httpx.AsyncClient) -> None:
    _, challenge = _pkce()
    base = {"client_id": "geocatalog-web", "redirect_uri": "http://127.0.0.1:8080/ui/x",
            "response_type": "code", "code_challenge": challenge,
            "code_challenge_method": "S256"}
    for change, words in (({"redirect_uri": "https://evil.example/cb"}, "must lie under"),
                          ({"client_id": "other"}, "Unknown client"),
                          ({"code_challenge_method": "plain"}, "PKCE")):
        r = await local.get("/auth/authorize", params={**base, **change})
        assert r.status_code == 400, change
        assert words in r.text
        assert "evil.example" not in r.headers.get("location", "")
    r = await local.post("/auth/authorize", data={
        "client_id": "geocatalog-web", "redirect_uri": "https://evil.example/cb",
        "code_challenge": challenge, "username": "alice"})
    assert r.status_code == 400
    r = await local.post("/auth/token", data={
        "grant_type": "authorization_code", "code": "not-a-code", "client_id": "geocatalog-web",
        "redirect_uri": "http://127.0.0.1:8080/ui/x", "code_verifier": "v"})
    assert (r.status_code, r.json()["error"]) == (400, "invalid_grant")
    r = await local.get("/auth/logout", params={"post_logout_redirect_uri": "https://evil.example"})
    assert r.headers["location"] == "http://127.0.0.1:8080/"


async def test_a_web_clients_token_needs_the_api_as_audience(
        app, issuer: TestIssuer, collection: str) -> None:
    claims = issuer.claims("alice")
    claims["azp"] = "geocatalog-web"
    claims["aud"] = ["geocatalog", "geocatalog-processes"]
    async with http_client(app, issuer.sign(claims)) as c:
        assert (await c.post(f"/data/collections/{collection}/items",
                             json=make_item("web"))).status_code == 201
        assert (await c.get("/processes/processes/echo")).status_code == 200
    claims["aud"] = ["account"]
    async with http_client(app, issuer.sign(claims)) as c:
        r = await c.post(f"/data/collections/{collection}/items", json=make_item("web2"))
        assert r.status_code == 403
        assert (await c.get("/processes/processes/echo")).status_code == 403


async def test_every_html_answer_is_protected_from_framing(
        anon: httpx.AsyncClient, local: httpx.AsyncClient, collection: str) -> None:
    """`/browser/` and the API docs could be framed by any origin: every HTML answer has a
    Content-Security-Policy with `frame-ancestors 'none'` and `X-Frame-Options: DENY`."""
    _, challenge = _pkce()
    pages = [(anon, "/ui/home"), (anon, "/browser/"), (anon, "/browser/collections/x"),
             (anon, "/data/api.html"), (anon, "/processes/api.html"),
             (anon, "/ui/catalogs/nope"), (anon, "/ui/processes/echo"),
             (local, "/auth/authorize?client_id=geocatalog-web&response_type=code&"
                     "redirect_uri=http://127.0.0.1:8080/ui/session/callback&code_challenge="
                     f"{challenge}&code_challenge_method=S256"),
             (local, "/auth/authorize?client_id=nope")]
    for client, path in pages:
        r = await client.get(path, headers=HTML)
        assert r.headers["content-type"].startswith("text/html"), path
        policy = r.headers["content-security-policy"]
        assert ("frame-ancestors 'none'" in policy and "script-src 'self'" in policy) or \
            "default-src 'none'" in policy, (path, policy)
        assert "unsafe-eval" not in policy and "script-src 'unsafe-inline'" not in policy
        assert r.headers["x-frame-options"] == "DENY", path
        assert r.headers["x-content-type-options"] == "nosniff", path


async def test_api_docs_come_from_our_own_files(anon: httpx.AsyncClient) -> None:
    """Swagger UI came from a CDN (a blank page offline): both APIs' docs use the files
    `make web` fetched, and no inline script."""
    for api, document in (("data", "data/api"), ("processes", "processes/api")):
        for accept in (HTML, {"Accept": "*/*"}):
            r = await anon.get(f"/{api}/api.html", headers=accept)
            assert r.status_code == 200, r.text
            assert f'data-openapi="http://testserver/{document}"' in r.text
            sources = re.findall(r'(?:src|href)="([^"]+)"', r.text)
            assert sources and all(s.startswith("http://testserver/") for s in sources), sources
            assert all('src="' in attrs for attrs in re.findall(r"<script([^>]*)>", r.text))
    bundle = await anon.get("/ui/swagger-ui/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and "SwaggerUIBundle" in bundle.text


async def test_catalog_pages_take_only_catalog_paths(alice_data: httpx.AsyncClient) -> None:
    """`/ui/catalogs/x%3F_force=true` showed catalog x with forms that sent
    `DELETE .../x?_force=true`: the bypass of the delete confirmation. Such a path is no
    catalog's (404) and the page's requests encode each id."""
    top = unique("framed-")
    assert (await alice_data.post("/data/catalogs", json={
        "id": top, "type": "Catalog", "description": "d"})).status_code == 201
    r = await alice_data.get(f"/ui/catalogs/{top}%3F_force=true", headers=HTML)
    assert r.status_code == 404
    assert "delete-catalog" not in r.text
    assert f"There is no catalog '{top}?_force=true'" in html.unescape(r.text)
    r = await alice_data.get(f"/ui/catalogs/{top}", headers=HTML)
    assert r.status_code == 200 and 'id="delete-catalog"' in r.text
    script = (await alice_data.get("/ui/static/catalogs.js")).text
    assert "map(encodeURIComponent)" in script


async def test_the_code_comes_back_in_the_fragment(local: httpx.AsyncClient) -> None:
    """The development issuer answers a client that asks for the fragment there: a code it
    never sends to a server. (The service's own sessions trade theirs server-side: in the
    query, which the access log scrubs.)"""
    _, challenge = _pkce()
    redirect = "http://127.0.0.1:8080/ui/session/callback"
    form = await local.get("/auth/authorize", params={
        "client_id": "geocatalog-web", "redirect_uri": redirect, "response_type": "code",
        "state": "s1", "code_challenge": challenge, "code_challenge_method": "S256",
        "response_mode": "fragment"})
    assert 'name="response_mode" value="fragment"' in form.text
    r = await local.post("/auth/authorize", data={
        "client_id": "geocatalog-web", "redirect_uri": redirect, "code_challenge": challenge,
        "state": "s1", "username": "alice", "response_mode": "fragment"})
    back = urlsplit(r.headers["location"])
    assert (r.status_code, back.query) == (303, "")
    assert parse_qs(back.fragment)["state"] == ["s1"] and parse_qs(back.fragment)["code"]


def test_access_lines_never_carry_credentials() -> None:
    """And should a code or token come in a query all the same, uvicorn's access line shows
    `***` in its place."""
    config = logging_config("json")
    written = io.StringIO()
    config["handlers"]["default"]["stream"] = written
    config["loggers"]["uvicorn.access"]["level"] = "INFO"  # whatever an earlier test set
    logging.config.dictConfig(config)
    try:
        logging.getLogger("uvicorn.access").info(
            '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET",
            "/ui/session/callback?code=eyJ.secret.sig&state=s1&x=1&token=t0k&password=pw&"
            "client_secret=cs&Password=PW", "1.1", 200)
    finally:
        logging.config.dictConfig({"version": 1, "disable_existing_loggers": False})
    line = json.loads(written.getvalue().strip().splitlines()[-1])
    assert line["message"] == ('127.0.0.1:5 - "GET /ui/session/callback?code=***&state=***&x=1&'
                               'token=***&password=***&client_secret=***&Password=*** '
                               'HTTP/1.1" 200')


async def test_the_service_has_an_icon(anon: httpx.AsyncClient) -> None:
    """Browsers ask every page for /favicon.ico (STAC Browser names none): an icon, not a
    404 in each page's console; our pages name it."""
    r = await anon.get("/favicon.ico")
    assert (r.status_code, r.headers["content-type"]) == (200, "image/svg+xml")
    assert r.text.startswith("<svg") and "</svg>" in r.text
    page = await anon.get("/", headers={"Accept": "text/html"})
    assert '<link rel="icon" type="image/svg+xml" href="http://' in page.text
    assert '/favicon.ico">' in page.text


async def test_a_search_opened_in_a_browser_shows_its_results(
        anon: httpx.AsyncClient, alice_data: httpx.AsyncClient, collection: str) -> None:
    """Criteria in the address are applied (STAC Browser's search page would start empty):
    our page shows what the API answers for the same query, with its pages."""
    for n in range(3):
        item = make_item(f"s{n}", day=n + 1)
        item["properties"]["title"] = f"Sample {n} {PAYLOAD}"
        r = await alice_data.post(f"/data/collections/{collection}/items", json=item)
        assert r.status_code == 201, r.text
    query = f"collections={collection}&bbox=-1,-1,2,2&datetime=2021-01-01T00:00:00Z/..&limit=2"
    r = await anon.get(f"/data/search?{query}", headers=HTML)
    assert (r.status_code, r.headers["content-type"]) == (200, "text/html; charset=utf-8")
    assert "3 items match; 2 on this page." in r.text
    assert f"Sample 2 {PAYLOAD}" not in r.text  # escaped
    assert (f'<a href="http://testserver/browser/collections/{collection}/items/s2">Sample 2 '
            "&lt;script&gt;alert(1)&lt;/script&gt;</a>") in r.text
    # the criteria in words (their values as sent in a tooltip), the variable by name
    words = collection.split("-", 1)[1].replace("_", " ").capitalize()
    assert '<dt>Area</dt><dd title="-1,-1,2,2">-1,-1,2,2</dd>' in r.text
    assert f'<dt>Variables</dt><dd title="{collection}">{words}</dd>' in r.text
    assert f'<td title="{collection}">{words}</td>' in r.text
    # facets of the same search, each narrowing it
    kept = [("bbox", "-1,-1,2,2"), ("datetime", "2021-01-01T00:00:00Z/.."), ("limit", "2")]
    narrowed = html.escape(urlencode([*kept, ("collections", collection)]))
    assert (f'<a href="http://testserver/ui/search?{narrowed}" title="{collection}">{words}'
            '</a> <span class="count">3</span>') in r.text
    in_2021 = html.escape(urlencode([("collections", collection), *kept[::2],
                                     ("datetime", "2021")]))
    assert (f'<a href="http://testserver/ui/search?{in_2021}">2021</a> '
            '<span class="count">3</span>') in r.text
    nxt = r.text.split('rel="next"')[0].rsplit('<a href="', 1)[1].split('"')[0]
    assert nxt.startswith("http://testserver/ui/search?") and "token=next" in nxt
    second = await anon.get(nxt.removeprefix("http://testserver").replace("&amp;", "&"),
                            headers=HTML)
    assert second.status_code == 200 and "/items/s0\">" in second.text
    assert 'rel="prev"' in second.text
    as_json = r.text.split('id="as-json"')[0].rsplit('<a href="', 1)[1].split('"')[0]
    api = await anon.get(as_json.removeprefix("http://testserver").replace("&amp;", "&"),
                         headers=HTML)
    assert [f["id"] for f in api.json()["features"]] == ["s2", "s1"]
    # the API's refusal, said on the page, with its status
    bad = await anon.get("/data/search?bbox=1,2", headers=HTML)
    assert bad.status_code == 400 and '<p class="error" role="alert">' in bad.text
    # the page's own form: typed days, empty fields no criterion
    typed = await anon.get(f"/ui/search?collections={collection}&bbox=&datetime=2021-01-02"
                           "&limit=")
    assert typed.status_code == 200 and "1 item matches; 1 on this page." in typed.text
    assert ('<dt>Time</dt><dd title="2021-01-02T00:00:00Z/2021-01-02T23:59:59Z">'
            "2021-01-02T00:00:00Z to 2021-01-02T23:59:59Z</dd>") in typed.text
    assert "<dt>Area</dt>" not in typed.text
    # the Variables field shows the variable by the words it asks for (a facet gave its id),
    # and they find the same variable again
    field = typed.text.split('id="f-collections"')[1].split('value="')[1].split('"')[0]
    assert field != collection and field.lower() == words.lower(), field
    again = await anon.get("/ui/search", params={"collections": field, "datetime": "2021-01-02"})
    assert "1 item matches; 1 on this page." in again.text
    assert [typed_datetime(v) for v in (
        "2021-01-01/2021-06-30", "../2021-06-30", "2021", "2024-02", "2020/2021-03", "2021/..",
        "2021-01-01T10:00:00Z/..", "2021-13", "yesterday")] == [
        "2021-01-01T00:00:00Z/2021-06-30T23:59:59Z", "../2021-06-30T23:59:59Z",
        "2021-01-01T00:00:00Z/2021-12-31T23:59:59Z",
        "2024-02-01T00:00:00Z/2024-02-29T23:59:59Z",
        "2020-01-01T00:00:00Z/2021-03-31T23:59:59Z", "2021-01-01T00:00:00Z/..",
        "2021-01-01T10:00:00Z/..", "2021-13", "yesterday"]
    year = await anon.get(f"/ui/search?collections={collection}&datetime=2021")
    assert year.status_code == 200 and '<dt>Time</dt><dd title="2021-01-01T00:00:00Z/' \
        '2021-12-31T23:59:59Z">2021-01-01T00:00:00Z to 2021-12-31T23:59:59Z</dd>' in year.text
    # no criteria: STAC Browser's search page, as before
    assert (await anon.get("/data/search", headers=HTML)).headers["location"] == \
        "/browser/search"


def test_a_collection_link_without_a_title_shows_the_collection_id() -> None:
    from stac_ext.web.pages.catalogs import _split

    parts = _split({"links": [
        {"rel": "child", "href": "http://t/data/collections/climate_forecast-sea%20ice"},
        {"rel": "child", "href": "http://t/data/collections/c2", "title": "Named"},
        {"rel": "child", "href": "http://t/data/catalogs/a/b"}]}, "http://t/data/catalogs/")
    assert [c["label"] for c in parts["collections"]] == ["climate_forecast-sea ice", "Named"]
    assert [c["path"] for c in parts["catalogs"]] == ["a/b"]


async def test_a_job_page_of_no_job_is_a_404(alice_processes: httpx.AsyncClient) -> None:
    """The page answered 200 "There is no job ... of yours" where the JSON is a 404: now
    both say 404; a job of hers is a 200."""
    missing = "/processes/jobs/00000000-0000-4000-8000-000000000000"
    r = await alice_processes.get(missing, headers=HTML)
    assert (r.status_code, r.headers["content-type"]) == (404, "text/html; charset=utf-8")
    assert 'data-job="00000000-0000-4000-8000-000000000000"' in r.text
    r = await alice_processes.post("/processes/processes/echo/execution",
                                   json={"inputs": {"message": "hi"}})
    assert r.status_code == 201, r.text  # accepted: run apart
    job = r.json()["jobID"]
    r = await alice_processes.get(f"/processes/jobs/{job}", headers=HTML)
    assert (r.status_code, f'data-job="{job}"' in r.text) == (200, True)


async def test_a_process_page_of_no_process_is_a_404(alice_processes: httpx.AsyncClient
                                                     ) -> None:
    """As a job's: it answered 200, its script saying there is no such process."""
    for path, status in (("/processes/processes/nope", 404), ("/ui/processes/nope", 404),
                         ("/processes/processes/echo", 200)):
        r = await alice_processes.get(path, headers=HTML)
        assert (r.status_code, r.headers["content-type"]) == (
            status, "text/html; charset=utf-8"), path
        assert 'data-fragment="http://testserver/ui/fragments/processes/' in r.text, path
