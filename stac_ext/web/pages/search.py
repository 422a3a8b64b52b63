"""Item search results in a browser: `/data/search?bbox=...&datetime=...` opened in a browser
lands here with its criteria applied (STAC Browser's search page starts empty), showing what
the API answers for that same query, with its pages."""

from __future__ import annotations

import asyncio
import calendar
import re
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from fastapi import APIRouter, Header, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.facets import FACETS, counted_criteria, facets, variable_words
from stac_ext.web.pages.explore import FORMAT_NAMES, format_of
from stac_ext.web.public_api import get_json
from stac_ext.web.templating import page

router = APIRouter()


def _row(feature: dict[str, Any]) -> dict[str, Any]:
    properties = feature.get("properties") or {}
    collection, item = str(feature.get("collection", "")), str(feature.get("id", ""))
    return {"title": properties.get("title") or item, "collection": collection,
            "datetime": properties.get("datetime") or properties.get("start_datetime") or "",
            "visibility": properties.get("visibility", "public"),
            "project": properties.get("project"), "owner": properties.get("owner"),
            "href": f"browser/collections/{quote(collection, safe='')}/items/"
                    f"{quote(item, safe='')}", **explorable(feature)}


def explorable(feature: dict[str, Any]) -> dict[str, Any]:
    """The item's assets the service's explorer opens, each with its page there, and the
    item's quicklook."""
    found = feature.get("assets")
    assets: dict[str, Any] = found if isinstance(found, dict) else {}
    explore, quicklook = [], None
    for key, asset in assets.items():
        if not isinstance(asset, dict) or not asset.get("href"):
            continue
        href, roles = str(asset["href"]), asset.get("roles") or []
        if "thumbnail" in roles and str(asset.get("type", "")).startswith("image/"):
            quicklook = quicklook or href
        elif fmt := format_of(href, asset.get("type")):
            explore.append({"format": FORMAT_NAMES[fmt], "title": asset.get("title") or key,
                            "href": "ui/explore?" + urlencode({
                                "collection": feature.get("collection", ""),
                                "item": feature.get("id", ""), "source": href})})
    return {"explore": explore, "quicklook": quicklook}


def _pages(body: dict[str, Any]) -> dict[str, str]:
    """The answer's next / prev links as addresses of this page (their query as is)."""
    rels = {"next": "next", "prev": "prev", "previous": "prev"}  # stac-fastapi: previous
    return {rels[link["rel"]]: "ui/search?" + urlsplit(str(link.get("href", ""))).query
            for link in body.get("links", [])
            if link.get("rel") in rels and link.get("method", "GET") == "GET"}


#: A year, a month or a day, as a person types it.
_PERIOD = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")
#: The criteria the page's form offers, typed (STAC Browser's picker goes month by month),
#: as the page names them.
FORM_FIELDS = {"q": "Words", "collections": "Variables", "bbox": "Area", "datetime": "Time",
               "limit": "Items per page"}


def _period(value: str) -> tuple[str, str] | None:
    """The first and last second (UTC) of a year, a month or a day; None for anything
    else (the API judges it)."""
    found = _PERIOD.match(value)
    if found is None:
        return None
    year, month, day = found.groups()
    if month is None:
        return f"{year}-01-01T00:00:00Z", f"{year}-12-31T23:59:59Z"
    if not 1 <= int(month) <= 12:
        return None
    last = day or f"{calendar.monthrange(int(year), int(month))[1]:02d}"
    return f"{year}-{month}-{day or '01'}T00:00:00Z", f"{year}-{month}-{last}T23:59:59Z"


def typed_datetime(value: str) -> str:
    """A range a person types (`2021`, `2021-03`, `2021-03-01`, `2021/2022-06`, open ends
    `..`) as the API reads it: each end from the first second of its period to the last
    (UTC); anything else as typed."""
    parts = value.split("/")
    if len(parts) > 2:
        return value
    if len(parts) == 1:
        whole = _period(value)
        return "/".join(whole) if whole else value
    start, end = parts
    first, last = _period(start), _period(end)
    return "/".join([first[0] if first else start, last[1] if last else end])


def typed_criteria(query: str) -> list[tuple[str, str]]:
    """The criteria of a query string as the person typed them (a field left empty: no
    criterion)."""
    return [(k, v) for k, v in parse_qsl(query, keep_blank_values=True)
            if k != "f" and (v or k not in FORM_FIELDS)]


def _typed(request: Request) -> list[tuple[str, str]]:
    return typed_criteria(request.url.query)


def api_criteria(typed: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The criteria as the API reads them."""
    return [(k, typed_datetime(v) if k == "datetime" else v) for k, v in typed]





async def _results(request: Request, typed: list[tuple[str, str]],
                   authorization: str | None = None) -> tuple[dict[str, Any], int]:
    """What the API's search answers for the criteria `typed` (to the caller of
    `authorization`, else anyone), with their facets, as the results' template shows it;
    and the status to answer."""
    data = "/" + request.app.state.web.data_prefix.strip("/")
    criteria = api_criteria(typed)
    counted = urlencode([*counted_criteria(criteria), ("aggregations", ",".join(FACETS))])
    # the search and its counts at once: neither waits for the other
    (status, body), (_, buckets) = await asyncio.gather(
        get_json(request, f"{data}/search?{urlencode(criteria)}", authorization=authorization),
        get_json(request, f"{data}/aggregate?{counted}", authorization=authorization))
    if status != 200 or not isinstance(body, dict):
        why = body.get("description") if isinstance(body, dict) else None
        return ({"rows": [], "pages": {}, "facets": {},
                 "error": why or f"The search failed ({status})."},
                status if status >= 400 else 502)
    return {"rows": [_row(f) for f in body.get("features", [])],
            "matched": body.get("numberMatched"), "pages": _pages(body), "error": None,
            "facets": facets(buckets, typed), "as_json":
            f"{data.lstrip('/')}/search?{urlencode([*criteria, ('f', 'json')])}"}, 200


#: The variables offered as completions (the first page of the non-empty collections)
VARIABLES_SHOWN = 1000


async def _variables(request: Request, authorization: str | None = None
                     ) -> list[dict[str, str]]:
    """The variables (non-empty collections) the caller reads: each id and its name in
    words (its title, else its standard name)."""
    data = "/" + request.app.state.web.data_prefix.strip("/")
    status, body = await get_json(request, f"{data}/collections",
                                  params={"limit": str(VARIABLES_SHOWN)},
                                  authorization=authorization)
    found = (body or {}).get("collections", []) if status == 200 else []
    return [{"id": str(c.get("id", "")),
             "words": str(c.get("title") or variable_words(c.get("id")))}
            for c in found if isinstance(c, dict) and c.get("id")]


def _folded(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def variable_ids(value: str, variables: list[dict[str, str]]) -> tuple[str, list[str]]:
    """The Variables field as the API takes it: each comma-separated entry an id, or words
    naming a variable (its title, or its standard name: "sea surface temperature"), which
    become its id (every convention's); and the entries that name none."""
    ids: list[str] = []
    unknown: list[str] = []
    known = {v["id"] for v in variables}
    for entry in (e.strip() for e in value.split(",")):
        if not entry:
            continue
        if entry in known:
            ids.append(entry)
            continue
        wanted = _folded(entry)
        named = [v["id"] for v in variables if wanted in (
            _folded(v["words"]), _folded(variable_words(v["id"])), _folded(v["id"]))]
        if named:
            ids += [i for i in named if i not in ids]
        else:
            ids.append(entry)  # as typed: the API answers for it
            unknown.append(entry)
    return ",".join(ids), unknown


def in_field(value: str, variables: list[dict[str, str]]) -> str:
    """The Variables field as the page shows it: each id as the words that name it (a
    facet's link gives ids), where those words name that variable alone; else the id."""
    words = {v["id"]: v["words"] for v in variables}
    shown = []
    for entry in (e.strip() for e in value.split(",")):
        named = words.get(entry)
        shown.append(named if named and variable_ids(named, variables)[0] == entry
                     else entry)
    return ", ".join(e for e in shown if e)


def with_ids(typed: list[tuple[str, str]], variables: list[dict[str, str]]
              ) -> tuple[list[tuple[str, str]], list[str]]:
    """The criteria typed, the Variables field as ids; and the words that named none."""
    unknown: list[str] = []
    out = []
    for name, value in typed:
        if name == "collections":
            value, missing = variable_ids(value, variables)
            unknown += missing
        out.append((name, value))
    return out, unknown


#: What a collection id is made of (anything else in the Variables field is words)
_ID = re.compile(r"[A-Za-z0-9_.:-]*")


def _names_words(typed: list[tuple[str, str]]) -> bool:
    """Whether the Variables field holds words, not only ids."""
    return any(not _ID.fullmatch(entry.strip())
               for name, value in typed if name == "collections" for entry in value.split(","))


@router.get("/ui/search")
async def search_page(request: Request,
                      authorization: str | None = Header(default=None)) -> HTMLResponse:
    """The results as the caller reads them (the browser's session: private and project
    items too)."""
    typed = _typed(request)
    variables = await _variables(request, authorization)
    by_ids, unknown = with_ids(typed, variables)
    criteria = api_criteria(by_ids)
    results, status = await _results(request, by_ids, authorization)
    form = dict(typed)
    if "collections" in form:
        form["collections"] = in_field(form["collections"], variables)
    return page(request, "search.html", {"criteria": _in_words(criteria),
                                         "form": form, "variables": variables,
                                         "unknown": unknown,
                                         "query": urlencode(criteria),
                                         "saved_search": saved_search(criteria), **results},
                status_code=status)


def saved_search(criteria: list[tuple[str, str]]) -> dict[str, Any]:
    """The criteria as a subscription saves them (`POST /search`'s body): what "Notify me"
    and "Process new data" send; the API judges them."""
    found: dict[str, Any] = {}
    for name, value in criteria:
        if name == "collections":
            found["collections"] = [c for c in value.split(",") if c]
        elif name == "bbox":
            try:
                found["bbox"] = [float(v) for v in value.split(",")]
            except ValueError:
                found["bbox"] = value  # refused by the API, in its words
        elif name == "q":
            found["q"] = [value]
        elif name in ("datetime", "owner", "filter", "filter-lang"):
            found[name] = value
    return found


def _in_words(criteria: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """Each criterion as the page says it: its name in words, its value, and its value as
    sent (a tooltip), variables by name."""
    said = []
    for name, value in criteria:
        shown = value
        if name == "collections":
            shown = ", ".join(variable_words(c) for c in value.split(",") if c)
        elif name == "datetime":
            shown = value.replace("/", " to ")
        said.append((FORM_FIELDS.get(name, name), shown, value))
    return said


@router.get("/ui/fragments/search")
async def search_fragment(request: Request,
                          authorization: str | None = Header(default=None)) -> HTMLResponse:
    typed = _typed(request)
    if _names_words(typed):  # words in the Variables field: their ids, as the caller
        typed, _ = with_ids(typed, await _variables(request, authorization))
    results, status = await _results(request, typed, authorization)
    return page(request, "fragments/search_results.html", results, status_code=status)
