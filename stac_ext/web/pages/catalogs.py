"""The catalogs tree in a browser: the top level, and a catalog's page with its links and the
forms that organise it (create a child, edit, replace links, delete). The forms act through
`/data/catalogs` with the user's token, in the browser."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote

from fastapi import APIRouter, Header, Request
from fastapi.responses import HTMLResponse

from stac_ext.platform.access import RIGHTS
from stac_ext.web.public_api import get_json
from stac_ext.web.templating import client_settings, page

router = APIRouter()
#: the subtree shown before a forced delete stops here (the API removes it all anyway)
SUBTREE_SHOWN = 200


def _split(document: dict[str, Any], catalogs_url: str) -> dict[str, list[dict[str, Any]]]:
    """A catalog's links by what they point at: sub-catalogs, collections, items."""
    parts: dict[str, list[dict[str, Any]]] = {"catalogs": [], "collections": [], "items": []}
    for link in document.get("links", []):
        href = str(link.get("href", ""))
        if link.get("rel") == "child":
            sub = href.startswith(catalogs_url)
            # a collection link without a title: the collection's id, not its address
            parts["catalogs" if sub else "collections"].append(
                {**link, "path": href.removeprefix(catalogs_url) if sub else None,
                 "label": link.get("title") or unquote(href.rstrip("/").rsplit("/", 1)[-1])})
        elif link.get("rel") == "item":
            # an item link names no title: "collection / item", from its address
            _, _, tail = href.partition("/collections/")
            parts["items"].append({**link, "label": link.get("title")
                                   or unquote(tail.replace("/items/", " / "))})
    return parts


def api_path(path: str) -> str:
    """A catalog's path of ids as a URL path: each id encoded (a `?` in an id stays in it)."""
    return "/".join(quote(part, safe="") for part in path.split("/"))


def _catalogs_url(request: Request) -> str:
    return client_settings(request)["data"] + "catalogs/"


async def _subtree(request: Request, path: str, authorization: str | None = None
                   ) -> list[str]:
    """The paths under a catalog, as the API shows them to the caller of `authorization`
    (else anyone): one request (`/catalogs/{path}/_subtree`)."""
    prefix = request.app.state.web.data_prefix
    status, body = await get_json(request, f"{prefix}/catalogs/{api_path(path)}/_subtree",
                                  params={"limit": str(SUBTREE_SHOWN)},
                                  authorization=authorization)
    return list((body or {}).get("catalogs", [])) if status == 200 else []


async def _top_level(request: Request, authorization: str | None = None
                     ) -> tuple[list[dict[str, Any]], int]:
    """The top-level catalogs the caller of `authorization` (else anyone) reads."""
    prefix = request.app.state.web.data_prefix
    status, body = await get_json(request, f"{prefix}/catalogs", authorization=authorization)
    return _split(body or {}, _catalogs_url(request))["catalogs"], status


@router.get("/ui/catalogs")
async def top_level(request: Request,
                    authorization: str | None = Header(default=None)) -> HTMLResponse:
    """The catalogs the caller reads (the browser's session: private and project catalogs
    too), each with who reads it."""
    catalogs, status = await _top_level(request, authorization)
    return page(request, "catalogs.html", {"catalogs": catalogs}, status_code=status)


@router.get("/ui/fragments/catalogs")
async def top_level_fragment(request: Request,
                             authorization: str | None = Header(default=None)
                             ) -> HTMLResponse:
    catalogs, status = await _top_level(request, authorization)
    return page(request, "fragments/catalog_list.html", {"catalogs": catalogs},
                status_code=status)


async def _catalog(request: Request, path: str, authorization: str | None = None
                   ) -> tuple[dict[str, Any] | None, Any, int]:
    """A catalog's page context as the caller of `authorization` (else anyone) reads it,
    or None with the API's error body; and the status."""
    face = request.app.state.web
    if not re.fullmatch(face.catalog_path, path):  # e.g. `a?_force=true`: not a catalog
        return None, {"description": f"There is no catalog {path!r}: a catalog's address is "
                                     "its ids, separated by /."}, 404
    status, body = await get_json(request, f"{face.data_prefix}/catalogs/{api_path(path)}",
                                  authorization=authorization)
    if status != 200:
        return None, body, status
    parts = _split(body, _catalogs_url(request))
    ancestors = path.split("/")
    return {
        "path": path, "catalog": body, **parts, "update_right": RIGHTS[("catalog", "update")],
        "crumbs": [("/".join(ancestors[:i + 1]), ancestors[i]) for i in range(len(ancestors))],
        "subtree": await _subtree(request, path, authorization) if parts["catalogs"] else [],
    }, body, status


@router.get("/ui/catalogs/{path:path}")
async def catalog_page(path: str, request: Request,
                       authorization: str | None = Header(default=None)) -> HTMLResponse:
    """The catalog as the caller reads it (the browser's session: a catalog shared with
    them only too). Its script fetches it again (`catalog_fragment`) before it offers the
    forms, so that they are never replaced under a person already typing."""
    context, body, status = await _catalog(request, path, authorization)
    if context is None:
        if status == 404 and re.fullmatch(request.app.state.web.catalog_path, path):
            return page(request, "catalog_hidden.html", {"path": path, "error": body},
                        status_code=404)
        return page(request, "error.html", {"error": body}, status_code=status)
    return page(request, "catalog.html", context)


@router.get("/ui/fragments/catalogs/{path:path}")
async def catalog_fragment(path: str, request: Request,
                           authorization: str | None = Header(default=None)) -> HTMLResponse:
    context, body, status = await _catalog(request, path, authorization)
    if context is None:
        return page(request, "fragments/error.html", {"error": body}, status_code=status)
    return page(request, "fragments/catalog_main.html", context)
