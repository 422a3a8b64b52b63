"""Browser sessions (the backend-for-frontend): signing in through the service (code + PKCE
traded server-side), the cookie's exact flags, every API read and written with the
session's token, requests from other sites refused (CSRF), the token refreshed, signing
out; and no token ever in an answer or in the database in clear. The same in Chromium, in
new tabs and after reloads: tests/web/test_session_browser.py."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import asyncpg
import httpx

from stac_ext.platform.sessions.middleware import FORGED
from stac_ext.settings import Settings
from tests.support.sessions import SAME_ORIGIN, cookie_of, no_cookies, sign_in
from tests.support.stac import unique
from tests.web.conftest import LOCAL_BASE

BASE = LOCAL_BASE


async def test_a_session_from_sign_in_to_sign_out(signing_in: httpx.AsyncClient,
                                                  settings: Settings) -> None:
    r = await signing_in.get("/ui/session")
    assert (r.status_code, r.json()) == (200, {"signedIn": False})
    cookie, callback = await sign_in(signing_in, "alice", "ocean-lab", "updateCatalog")
    # back where she asked, with the cookie: exactly these flags (no Secure over http)
    assert callback.headers["location"] == f"{BASE}/ui/jobs"
    assert callback.headers.get_list("set-cookie") == [
        f"geocatalog-session={cookie}; Path=/; Max-Age=43199; HttpOnly; SameSite=Lax",
        "geocatalog-sign-in=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"] or \
        callback.headers.get_list("set-cookie") == [
        f"geocatalog-session={cookie}; Path=/; Max-Age=43200; HttpOnly; SameSite=Lax",
        "geocatalog-sign-in=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"]
    assert len(cookie) >= 43
    session = {"Cookie": f"geocatalog-session={cookie}"}
    r = await signing_in.get("/ui/session", headers=session)
    body = r.json()
    assert body.pop("expires").endswith("Z")
    assert body == {"signedIn": True, "username": "alice", "groups": ["ocean-lab"],
                    "rights": ["updateCatalog"]}
    assert r.headers["cache-control"] == "no-store"

    # the APIs read and write as her, with nothing but the cookie (and the browser's word
    # that the page is this service's own)
    assert (await signing_in.get("/processes/jobs")).status_code == 401
    r = await signing_in.get("/processes/jobs", headers=session)
    assert r.status_code == 200, r.text
    assert (r.headers["cache-control"], "Cookie" in r.headers["vary"]) == ("private", True)
    catalog = unique("session-")
    r = await signing_in.post("/data/catalogs", headers={**session, **SAME_ORIGIN}, json={
        "id": catalog, "type": "Catalog", "description": "d", "visibility": "private"})
    assert r.status_code == 201, r.text
    assert r.json()["owner"] == "alice"
    assert (await signing_in.get(f"/data/catalogs/{catalog}")).status_code == 404
    assert (await signing_in.get(f"/data/catalogs/{catalog}", headers=session)).status_code == 200
    # a page knows who she is (no token in it)
    page = await signing_in.get("/ui/jobs", headers={**session, "Accept": "text/html"})
    assert '"username": "alice"' in page.text and "Signed in as alice" in page.text
    # the pages' own files are everyone's: served without looking the session up
    script = await signing_in.get("/ui/static/session.js", headers=session)
    assert script.status_code == 200 and "Cookie" not in script.headers.get("vary", "")
    # a bearer token of the request's own wins over the session
    token = await signing_in.get("/processes/jobs", headers={
        **session, "Authorization": "Bearer not-a-token"})
    assert token.status_code == 401

    # what the database keeps: no cookie, no token in clear
    conn = await asyncpg.connect(settings.database_url)
    try:
        rows = await conn.fetch("SELECT id_hash, tokens, username FROM sessions.sessions "
                                "WHERE username = 'alice'")
    finally:
        await conn.close()
    assert rows and all(cookie.encode() not in bytes(row["id_hash"]) for row in rows)
    assert all(row["tokens"].count(".") == 4 for row in rows)  # JWE compact, sealed

    # signing out: only from the service's own pages
    refused = await signing_in.post("/ui/session/sign-out", headers={
        **session, "Sec-Fetch-Site": "cross-site"})
    assert refused.status_code == 403
    assert (await signing_in.get("/ui/session", headers=session)).json()["signedIn"] is True
    out = await signing_in.post("/ui/session/sign-out", headers={**session, **SAME_ORIGIN})
    assert out.status_code == 303
    where = urlsplit(out.headers["location"])
    assert where.path == "/auth/logout"
    assert parse_qs(where.query) == {"client_id": ["geocatalog-web"],
                                     "post_logout_redirect_uri": [f"{BASE}/"]}
    assert out.headers.get_list("set-cookie") == [
        "geocatalog-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"]
    # the old cookie signs nobody in, and the browser is told to forget it
    after = await signing_in.get("/ui/session", headers=session)
    assert after.json() == {"signedIn": False}
    assert after.headers.get_list("set-cookie") == [
        "geocatalog-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"]
    assert (await signing_in.get("/processes/jobs", headers=session)).status_code == 401


async def test_requests_from_other_sites_are_refused(signing_in: httpx.AsyncClient) -> None:
    """A change the cookie would sign in is taken only from the service's own pages: the
    browser's Fetch Metadata, else its `Origin`; in the API's own error format."""
    cookie, _ = await sign_in(signing_in, "carol")
    session = {"Cookie": f"geocatalog-session={cookie}"}
    body = {"id": unique("forged-"), "type": "Catalog", "description": "d"}
    for headers in ({}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
                    {"Origin": "https://evil.example"}, {"Origin": "null"},
                    {"Sec-Fetch-Site": "cross-site", "Origin": BASE}):
        r = await signing_in.post("/data/catalogs", json=body, headers={**session, **headers})
        assert (r.status_code, r.json()) == (403, {"code": "Forbidden",
                                                   "description": FORGED}), headers
        r = await signing_in.post("/processes/processes/echo/execution", headers={
            **session, **headers}, json={"processInputs": {"message": "hi"}})
        assert r.status_code == 403 and r.json()["detail"] == FORGED, headers
    assert (await signing_in.get(f"/data/catalogs/{body['id']}", headers=session)).status_code \
        == 404  # nothing was done
    # reads are safe: a link from anywhere opens as her
    r = await signing_in.get("/processes/jobs", headers={**session, "Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 200
    # from her own pages: by Fetch Metadata, or (a browser without it) by Origin
    r = await signing_in.post("/data/catalogs", json=body, headers={**session, **SAME_ORIGIN})
    assert r.status_code == 201, r.text
    r = await signing_in.post("/data/catalogs", headers={**session, "Origin": BASE}, json={
        **body, "id": unique("origin-")})
    assert r.status_code == 201, r.text


async def test_the_token_is_refreshed_and_a_dead_session_ends(
        signing_in: httpx.AsyncClient, settings: Settings) -> None:
    cookie, _ = await sign_in(signing_in, "dave")
    session = {"Cookie": f"geocatalog-session={cookie}"}
    conn = await asyncpg.connect(settings.database_url)
    try:
        # its access token about to expire: the next request refreshes it first
        await conn.execute("UPDATE sessions.sessions SET access_expires = now() "
                           "WHERE username = 'dave'")
        r = await signing_in.get("/processes/jobs", headers=session)
        assert r.status_code == 200, r.text
        left = await conn.fetchval("SELECT access_expires - now() FROM sessions.sessions "
                                   "WHERE username = 'dave'")
        assert left.total_seconds() > 3000
        # nothing left to refresh with: the session ends, the browser forgets it
        await conn.execute("UPDATE sessions.sessions SET access_expires = now(), "
                           "refresh_expires = now() WHERE username = 'dave'")
        r = await signing_in.get("/processes/jobs", headers=session)
        assert r.status_code == 401
        assert r.headers.get_list("set-cookie") == [
            "geocatalog-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"]
        assert await conn.fetchval("SELECT count(*) FROM sessions.sessions "
                                   "WHERE username = 'dave'") == 0
    finally:
        await conn.close()


async def test_a_sign_in_is_finished_only_where_it_started(signing_in: httpx.AsyncClient) -> None:
    start = await signing_in.get("/ui/session/sign-in", params={"return": "https://evil.example/"})
    asked = {k: v[0] for k, v in parse_qs(urlsplit(start.headers["location"]).query).items()}
    form = await signing_in.post("/auth/authorize", data={
        "client_id": asked["client_id"], "redirect_uri": asked["redirect_uri"],
        "code_challenge": asked["code_challenge"], "state": asked["state"],
        "username": "mallory"})
    back = urlsplit(form.headers["location"])
    callback = f"{back.path}?{back.query}"
    # another browser (no sign-in cookie): the code is useless there (login CSRF)
    r = await signing_in.get(callback)
    assert r.status_code == 400
    assert "This sign-in was started in another browser" in r.text
    assert "set-cookie" not in {k.lower() for k in r.headers if "geocatalog-session" in
                                r.headers.get(k, "")}
    # another sign-in's cookie: refused as well
    other = await signing_in.get("/ui/session/sign-in")
    r = await signing_in.get(callback, headers={
        "Cookie": f"geocatalog-sign-in={cookie_of(other, 'geocatalog-sign-in')}"})
    assert r.status_code == 400 and "This answer belongs to another sign-in." in r.text
    # its own: signed in, and sent back to this service only (never to the address asked)
    r = await signing_in.get(callback, headers={
        "Cookie": f"geocatalog-sign-in={cookie_of(start, 'geocatalog-sign-in')}"})
    assert (r.status_code, r.headers["location"]) == (303, f"{BASE}/")
    # the identity provider's refusal, in words
    r = await signing_in.get("/ui/session/callback", params={
        "state": asked["state"], "error": "access_denied",
        "error_description": "<b>no</b>"}, headers={
        "Cookie": f"geocatalog-sign-in={cookie_of(start, 'geocatalog-sign-in')}"})
    assert r.status_code == 400
    assert "The identity provider did not sign you in: &lt;b&gt;no&lt;/b&gt;." in r.text


async def test_over_https_the_cookie_is_the_hosts_alone(service_app, tmp_path: Path) -> None:
    """Behind https (BASE_URL, with a path a proxy takes off): `__Host-` and `Secure`."""
    async with service_app(oidc_issuer=None, geocatalog_data_dir=tmp_path,
                           base_url="https://maps.example/geo") as service:
        client = service.client(base_url="http://internal", cookies=no_cookies())
        start = await client.get("/ui/session/sign-in")
        assert start.headers["location"].startswith("https://maps.example/geo/auth/authorize?")
        flight = cookie_of(start, "__Host-geocatalog-sign-in")
        assert start.headers["set-cookie"].endswith("; HttpOnly; SameSite=Lax; Secure")
        asked = {k: v[0] for k, v in
                 parse_qs(urlsplit(start.headers["location"]).query).items()}
        assert asked["redirect_uri"] == "https://maps.example/geo/ui/session/callback"
        form = await client.post("/auth/authorize", data={
            "client_id": asked["client_id"], "redirect_uri": asked["redirect_uri"],
            "code_challenge": asked["code_challenge"], "state": asked["state"],
            "username": "erin"})
        back = urlsplit(form.headers["location"])
        r = await client.get(back.path.removeprefix("/geo") + "?" + back.query,
                             headers={"Cookie": f"__Host-geocatalog-sign-in={flight}"})
        assert r.status_code == 303, r.text
        cookie = cookie_of(r, "__Host-geocatalog-session")
        assert r.headers.get_list("set-cookie")[0].endswith(
            "; Path=/; Max-Age=43199; HttpOnly; SameSite=Lax; Secure") or \
            r.headers.get_list("set-cookie")[0].endswith(
            "; Path=/; Max-Age=43200; HttpOnly; SameSite=Lax; Secure")
        who = await client.get("/ui/session",
                               headers={"Cookie": f"__Host-geocatalog-session={cookie}"})
        assert who.json()["username"] == "erin"
