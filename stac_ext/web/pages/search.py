"""Item search results in a browser: `/data/search?bbox=...&datetime=...` opened in a browser
lands here with its criteria applied (STAC Browser's search page starts empty), showing what
the API answers for that same query, with its pages."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.public_api import get_json
from stac_ext.web.templating import page

router = APIRouter()


def _row(feature: dict[str, Any]) -> dict[str, Any]:
    properties = feature.get("properties") or {}
    collection, item = str(feature.get("collection", "")), str(feature.get("id", ""))
    return {"title": properties.get("title") or item, "collection": collection,
            "datetime": properties.get("datetime") or properties.get("start_datetime") or "",
            "href": f"browser/collections/{quote(collection, safe='')}/items/"
                    f"{quote(item, safe='')}"}


def _pages(body: dict[str, Any]) -> dict[str, str]:
    """The answer's next / prev links as addresses of this page (their query as is)."""
    rels = {"next": "next", "prev": "prev", "previous": "prev"}  # stac-fastapi: previous
    return {rels[link["rel"]]: "ui/search?" + urlsplit(str(link.get("href", ""))).query
            for link in body.get("links", [])
            if link.get("rel") in rels and link.get("method", "GET") == "GET"}


_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: The criteria the page's form offers, typed (STAC Browser's picker goes month by month).
FORM_FIELDS = ("q", "collections", "bbox", "datetime", "limit")


def typed_datetime(value: str) -> str:
    """A range a person types (`2021-01-01/2021-06-30`, `2021-03-01`, open ends `..`) as the
    API reads it: days become the first and last second of those days (UTC)."""
    parts = value.split("/")
    if len(parts) > 2:
        return value
    if len(parts) == 1:
        return f"{value}T00:00:00Z/{value}T23:59:59Z" if _DAY.match(value) else value
    start, end = parts
    return "/".join([f"{start}T00:00:00Z" if _DAY.match(start) else start,
                     f"{end}T23:59:59Z" if _DAY.match(end) else end])


@router.get("/ui/search")
async def search_page(request: Request) -> HTMLResponse:
    criteria = [(k, typed_datetime(v) if k == "datetime" else v)
                for k, v in parse_qsl(request.url.query, keep_blank_values=True)
                if k != "f" and (v or k not in FORM_FIELDS)]  # a field left empty: no criterion
    query = urlencode(criteria)
    search = "/" + request.app.state.web.data_prefix.strip("/") + "/search"
    status, body = await get_json(request, f"{search}?{query}")
    if status != 200 or not isinstance(body, dict):
        why = body.get("description") if isinstance(body, dict) else None
        return page(request, "search.html", {"criteria": criteria, "rows": [], "pages": {},
                                             "form": dict(criteria),
                                             "error": why or f"The search failed ({status})."},
                    status_code=status if status >= 400 else 502)
    return page(request, "search.html", {
        "criteria": criteria, "rows": [_row(f) for f in body.get("features", [])],
        "matched": body.get("numberMatched"), "pages": _pages(body), "error": None,
        "form": dict(criteria),
        "as_json": f"{search.lstrip('/')}?{urlencode([*criteria, ('f', 'json')])}"})
