"""STAC Browser at `/browser/`: the build's files, and its `index.html` for every other path
(history mode), given at serve time a `<base>` (assets are linked relatively), its
configuration (`config.js`: this service's `/data/` URL and title) and the bar over it.

STAC Browser has no sign-in of its own here: the browser's session is the service's
(`platform.sessions`), so its requests to this service read as the signed-in user, in every
tab and after every reload, and the bar says who that is, with Sign in and Sign out.
(Its own OIDC sign-in kept a user per tab, which a link opened in a new tab lost.)"""

from __future__ import annotations

import html
import json
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from stac_ext.platform.sessions.signed_in import SignedIn, signed_in
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
        # this service's session goes with its requests; a link elsewhere opens as a link
        "allowExternalAccess": False, "socialSharing": [],
        "authConfig": None,  # the service's session, not a sign-in of its own
    }


def browser_policy(request: Request) -> str:
    """STAC Browser's Content-Security-Policy: its own scripts only; fetches to this service;
    images from anywhere (thumbnails, the basemap's tiles); inline styles (its components
    set them); the bar's sign-out form, on to the identity provider."""
    issuer = urlsplit(request.app.state.web.sign_in.issuer)
    provider = f"{issuer.scheme}://{issuer.netloc}"
    return ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src * data: blob:; font-src 'self' data:; connect-src 'self'; "
            "worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'self'; "
            f"object-src 'none'; form-action 'self' {provider}")


#: The way back to the service's own pages, above STAC Browser (which links only within
#: the catalog): plain links, styled inline (its page's policy allows inline styles).
_BAR_STYLE = ("display:flex;gap:1.2em;align-items:center;padding:.35em 1em;"
              "background:#1f3a5a;font:14px system-ui,sans-serif")
_LINK_STYLE = "color:#fff;text-decoration:none"


_BUTTON_STYLE = ("color:#fff;background:none;border:1px solid #8aa;border-radius:3px;"
                 "font:inherit;cursor:pointer;padding:.1em .5em")


def _bar(base: str, user: SignedIn | None) -> str:
    """The bar: the service's pages, and the session (who, Sign out; or Sign in, which comes
    back to the page it was clicked on: its `Referer`)."""
    home = html.escape(base)
    links = [(home, "<b>geocatalog</b>"), (f"{home}ui/catalogs", "Catalogs"),
             (f"{home}ui/processes", "Processes"), (f"{home}ui/jobs", "Jobs")]
    if user is None:
        session = (f'<a id="geocatalog-bar-sign-in" style="{_LINK_STYLE}" '
                   f'href="{home}ui/session/sign-in">Sign in</a>')
    else:
        session = (f'<span id="geocatalog-bar-user" style="color:#fff">Signed in as '
                   f'{html.escape(user.username)}</span>'
                   f'<form method="post" action="{home}ui/session/sign-out" style="margin:0">'
                   f'<button type="submit" style="{_BUTTON_STYLE}">Sign out</button></form>')
    return (f'<nav id="geocatalog-bar" aria-label="geocatalog" style="{_BAR_STYLE}">'
            + "".join(f'<a style="{_LINK_STYLE}" href="{href}">{text}</a>'
                      for href, text in links)
            + f'<span style="margin-left:auto;display:flex;gap:1em;align-items:center">'
              f'{session}</span></nav>')


def router(dist: Path) -> APIRouter:
    routes = APIRouter()

    @routes.get("/browser")
    async def bare(request: Request) -> RedirectResponse:
        return RedirectResponse(f"{base_of(request)}browser/", status_code=308)

    @routes.get("/browser/config.js")
    async def config(request: Request) -> Response:
        script = f"window.STAC_BROWSER_CONFIG = {json.dumps(browser_config(request))};\n"
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
        bar = _bar(base_of(request), signed_in(request))
        page = _index(dist).replace("<head>", head, 1).replace(
            '<div id="stac-browser">', bar + '<div id="stac-browser">', 1)
        return HTMLResponse(page,
                            headers={"Cache-Control": "no-store",
                                     "Content-Security-Policy": browser_policy(request)})

    return routes
