"""A browser's session, as the service keeps it, for tests over HTTP: the sign-in walked as
a browser walks it (the service's sign-in, the local issuer's form, the way back), with a
client that keeps no cookie (each request carries those the test gives it)."""

from __future__ import annotations

from http.cookiejar import CookieJar, DefaultCookiePolicy
from urllib.parse import parse_qs, urlsplit

import httpx

#: What a browser says of a request from the service's own pages (Fetch Metadata)
SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin"}


def no_cookies() -> CookieJar:
    """A jar that keeps nothing."""
    return CookieJar(DefaultCookiePolicy(allowed_domains=[]))


def cookie_of(response: httpx.Response, name: str) -> str:
    """The value a `Set-Cookie` of the answer gives `name`."""
    for header in response.headers.get_list("set-cookie"):
        if header.startswith(f"{name}="):
            return header.split(";", 1)[0].split("=", 1)[1]
    raise AssertionError(f"no {name} in {response.headers.get_list('set-cookie')}")


async def sign_in(client: httpx.AsyncClient, user: str = "alice", groups: str = "",
                  rights: str = "", back: str = "/ui/jobs") -> tuple[str, httpx.Response]:
    """The whole sign-in as a browser goes, at a service with the local issuer: the
    session's cookie, and the answer of the way back."""
    start = await client.get("/ui/session/sign-in", params={"return": back})
    assert start.status_code == 303, start.text
    flight = cookie_of(start, "geocatalog-sign-in")
    asked = {k: v[0] for k, v in parse_qs(urlsplit(start.headers["location"]).query).items()}
    form = await client.post("/auth/authorize", data={
        "client_id": asked["client_id"], "redirect_uri": asked["redirect_uri"],
        "code_challenge": asked["code_challenge"], "state": asked["state"],
        "username": user, "groups": groups, "rights": rights})
    assert form.status_code == 303
    back_here = urlsplit(form.headers["location"])
    callback = await client.get(f"{back_here.path}?{back_here.query}",
                                headers={"Cookie": f"geocatalog-sign-in={flight}"})
    assert callback.status_code == 303, callback.text
    return cookie_of(callback, "geocatalog-session"), callback


async def session_headers(client: httpx.AsyncClient, user: str, groups: str = "",
                          rights: str = "") -> dict[str, str]:
    """The headers a signed-in browser's request from the service's pages carries."""
    cookie, _ = await sign_in(client, user, groups, rights)
    return {"Cookie": f"geocatalog-session={cookie}", **SAME_ORIGIN}
