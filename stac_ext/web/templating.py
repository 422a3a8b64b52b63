"""Rendering our pages: one Jinja2 environment (autoescaping every value), the page's
client settings and its Content-Security-Policy."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from stac_ext.platform.sessions.signed_in import signed_in
from stac_ext.web.facets import variable_words

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")


def prose(text: object) -> Markup:
    """A description written for the API (`code` in backticks) as a person reads it: the
    text escaped, each `code` span shown as code rather than with its backticks."""
    escaped = str(escape(str(text or "")))
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped))


def readers(visibility: object, project: object = None) -> str:
    """Who reads an item or a catalog, in words (its `visibility`, and `project` beside it)."""
    if visibility == "private":
        return "only its owner"
    if visibility == "project":
        return f"project {project}" if project else "its project"
    return "anyone"


#: An error's heading in words, by status (the APIs' `code` is an exception's class name)
ERROR_HEADINGS = {400: "Not understood", 401: "Sign in first", 403: "Not allowed",
                  404: "Not found", 409: "Already there", 503: "Not available now"}


def error_heading(error: object, status: int = 0) -> str:
    """The heading of an error page: OGC's `title`, else the status in words."""
    title = error.get("title") if isinstance(error, dict) else None
    return str(title or ERROR_HEADINGS.get(status, "Error"))


templates.env.filters["prose"] = prose
templates.env.filters["variable_words"] = variable_words
templates.env.filters["readers"] = readers
templates.env.globals["error_heading"] = error_heading


def base_of(request: Request) -> str:
    """This service's public address, ending in `/` (BASE_URL- and proxy-aware)."""
    return str(request.base_url)


def client_settings(request: Request) -> dict[str, Any]:
    """What the pages' scripts need: the APIs' addresses, and who the browser's session
    signed in (`user`: name, groups, rights; never a token)."""
    face = request.app.state.web
    base = base_of(request)
    user = signed_in(request)
    return {"base": base, "data": f"{base}{face.data_prefix.strip('/')}/",
            "processes": f"{base}{face.processes_prefix.strip('/')}/", "ui": f"{base}ui/",
            "localSignIn": "yes" if face.sign_in.local else "",
            "adminRight": face.admin_right, "user": user.public() if user else None}


def page_address(request: Request) -> str:
    """The address the browser asked for (the API's, where the negotiation served a page
    for it), to come back to after signing in."""
    path = getattr(request.state, "asked_path", None) or request.url.path
    query = request.url.query
    return f"{str(request.base_url).rstrip('/')}{path}{'?' + query if query else ''}"


def content_security_policy(request: Request) -> str:
    """Scripts only from our own files (no inline script, so nothing a user stored can run);
    fetches to this service only; forms to this service, and on to the identity provider
    (signing in and out go there)."""
    issuer = urlsplit(request.app.state.web.sign_in.issuer)
    provider = f"{issuer.scheme}://{issuer.netloc}"
    return ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            f"connect-src 'self'; form-action 'self' {provider}; "
            "frame-ancestors 'none'; base-uri 'self'; object-src 'none'")


def page(request: Request, name: str, context: dict[str, Any] | None = None,
         status_code: int = 200) -> HTMLResponse:
    face = request.app.state.web
    values = {"title": face.title, "client": client_settings(request), "base": base_of(request),
              "page_address": page_address(request), "status": status_code,
              **(context or {})}
    return templates.TemplateResponse(
        request, name, values, status_code=status_code,
        headers={"Content-Security-Policy": content_security_policy(request),
                 "Cache-Control": "no-store", "Vary": "Accept"})
