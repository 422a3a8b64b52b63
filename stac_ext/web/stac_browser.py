"""STAC Browser at `/browser/`: the build's files, and its `index.html` for every other path
(history mode), given at serve time a `<base>` (assets are linked relatively) and its
configuration (`config.js`: this service's `/data/` URL, title, OIDC sign-in, and the
sign-in of our pages read on every load: one sign-in for both)."""

from __future__ import annotations

import html
import json
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from stac_ext.web.templating import base_of, client_settings

NOT_BUILT = ("STAC Browser is not built here: `make web` builds it (Node.js and npm), "
             "then restart the service.")


@cache
def _index(dist: Path) -> str:
    return (dist / "index.html").read_text()


def browser_config(request: Request) -> dict:
    """STAC Browser's runtime options (docs/options.md of STAC Browser)."""
    face = request.app.state.web
    settings = client_settings(request)
    return {
        "catalogUrl": settings["data"], "catalogTitle": face.title,
        "pathPrefix": urlsplit(base_of(request)).path + "browser/",
        # tokens go to this service only; a link elsewhere opens as a plain link
        "allowExternalAccess": False, "socialSharing": [],
        "authConfig": {
            "type": "openIdConnect",
            "openIdConnectUrl": f"{face.sign_in.issuer}/.well-known/openid-configuration",
            # the code comes back in the query: STAC Browser's router drops a fragment before
            # its sign-in reads it (the access log shows the code as ***)
            "oidcConfig": {"client_id": face.sign_in.client_id},
        },
    }


def browser_policy(request: Request) -> str:
    """STAC Browser's Content-Security-Policy: its own scripts only; fetches to this service
    and the identity provider; images from anywhere (thumbnails, the basemap's tiles);
    inline styles (its components set them)."""
    issuer = urlsplit(request.app.state.web.sign_in.issuer)
    provider = f"{issuer.scheme}://{issuer.netloc}"
    return ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            f"img-src * data: blob:; font-src 'self' data:; connect-src 'self' {provider}; "
            "worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'self'; "
            f"object-src 'none'; form-action 'self' {provider}")


#: One sign-in for our pages and STAC Browser, whichever signed in (the same issuer and
#: client: oidc-client-ts keeps the user in this tab's session storage under one key):
#: every load of STAC Browser, a reload or a typed address too, reads with that user's token
#: until it expires or they sign out (STAC Browser 4.0.1 itself forgets its sign-in on a
#: load), and the bar says who is signed in (STAC Browser's own Log in is then not offered:
#: signing out is on our pages).
_SIGNED_IN = """(function () {
  var user = null;
  try { user = JSON.parse(window.sessionStorage.getItem(KEY) || "null"); } catch (e) {}
  if (!user || !user.access_token || (user.expires_at && user.expires_at * 1000 < Date.now())) {
    return;
  }
  window.STAC_BROWSER_CONFIG.requestHeaders = {Authorization: "Bearer " + user.access_token};
  // no "Log in" offered to one signed in (nor the sign-in it kept from an earlier load)
  window.STAC_BROWSER_CONFIG.authConfig = null;
  window.sessionStorage.removeItem("authConfig");
  var who = document.getElementById("geocatalog-bar-user");
  if (who && user.profile) { who.textContent = "Signed in as " + user.profile.preferred_username; }
})();
"""


def _user_key(request: Request) -> str:
    """Where oidc-client-ts keeps the signed-in user of this service's web client."""
    sign_in = request.app.state.web.sign_in
    return f"oidc.user:{sign_in.issuer}:{sign_in.client_id}"


#: The way back to the service's own pages, above STAC Browser (which links only within
#: the catalog): plain links, styled inline (its page's policy allows inline styles).
_BAR_STYLE = ("display:flex;gap:1.2em;align-items:center;padding:.35em 1em;"
              "background:#1f3a5a;font:14px system-ui,sans-serif")
_LINK_STYLE = "color:#fff;text-decoration:none"


def _bar(base: str) -> str:
    home = html.escape(base)
    links = [(home, "<b>geocatalog</b>"), (f"{home}ui/catalogs", "Catalogs"),
             (f"{home}ui/processes", "Processes"), (f"{home}ui/jobs", "Jobs")]
    return (f'<nav id="geocatalog-bar" aria-label="geocatalog" style="{_BAR_STYLE}">'
            + "".join(f'<a style="{_LINK_STYLE}" href="{href}">{text}</a>'
                      for href, text in links)
            + '<span id="geocatalog-bar-user" style="color:#fff;margin-left:auto"></span>'
            + "</nav>")


def router(dist: Path) -> APIRouter:
    routes = APIRouter()

    @routes.get("/browser")
    async def bare(request: Request) -> RedirectResponse:
        return RedirectResponse(f"{base_of(request)}browser/", status_code=308)

    @routes.get("/browser/config.js")
    async def config(request: Request) -> Response:
        script = (f"window.STAC_BROWSER_CONFIG = {json.dumps(browser_config(request))};\n"
                  + _SIGNED_IN.replace("KEY", json.dumps(_user_key(request))))
        return Response(script, media_type="text/javascript",
                        headers={"Cache-Control": "no-store"})

    @routes.get("/browser/{path:path}")
    async def files(path: str, request: Request) -> Response:
        if not (dist / "index.html").is_file():
            return HTMLResponse(f"<!doctype html><title>Not built</title><p>{NOT_BUILT}</p>",
                                status_code=503)
        if path:
            file = (dist / path).resolve()
            if file.is_file() and file.is_relative_to(dist.resolve()):
                hashed = path.startswith(("js/", "css/"))  # names carry a content hash
                return FileResponse(file, headers={"Cache-Control": "public, max-age=31536000, "
                                                   "immutable" if hashed else "no-cache"})
        head = (f'<head><base href="{html.escape(base_of(request))}browser/">'
                '<script defer="defer" src="config.js"></script>')
        page = _index(dist).replace("<head>", head, 1).replace(
            '<div id="stac-browser">', _bar(base_of(request)) + '<div id="stac-browser">', 1)
        return HTMLResponse(page,
                            headers={"Cache-Control": "no-store",
                                     "Content-Security-Policy": browser_policy(request)})

    return routes
