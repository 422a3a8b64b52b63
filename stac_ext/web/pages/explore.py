"""The data explorer's page: one asset of an item (`?collection=&item=&source=<its href>`),
or a job's file before it is published (`?source=` alone). The page names what it shows,
read as the caller (the browser's session); its script draws it from the explorer's views,
with the same sign-in. An item the caller may not read is a missing one here too: the same
404 page."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.public_api import get_json
from stac_ext.web.templating import page

router = APIRouter()
#: The page's path from the service root.
PAGE = "ui/explore"
#: The explorer draws with inline styles (its charts' tooltips): allowed on this page, whose
#: scripts are still only its own files; pictures come as data: URLs.
EXPLORE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
               "base-uri 'self'; object-src 'none'; form-action 'self' {provider}")
#: The formats the explorer reads, by the suffix of an address (a job's file has no item
#: to name its media type).
SUFFIXES = {".zarr": "zarr", ".nc": "netcdf", ".nc4": "netcdf", ".netcdf": "netcdf",
            ".parquet": "parquet", ".geoparquet": "parquet", ".csv": "csv"}
FORMAT_NAMES = {"zarr": "Zarr", "netcdf": "NetCDF", "parquet": "Parquet", "csv": "CSV"}
MEDIA_TYPES = {"application/vnd+zarr": "zarr", "application/vnd.zarr": "zarr",
               "application/netcdf": "netcdf", "application/x-netcdf": "netcdf",
               "application/vnd.apache.parquet": "parquet", "application/x-parquet": "parquet",
               "text/csv": "csv"}


def file_name(href: str) -> str:
    return urlsplit(href).path.rstrip("/").rsplit("/", 1)[-1] or href


def format_of(href: str, media_type: str | None = None) -> str | None:
    if media_type and (found := MEDIA_TYPES.get(media_type.split(";")[0].strip().lower())):
        return found
    name = file_name(href).lower()
    return next((fmt for suffix, fmt in SUFFIXES.items() if name.endswith(suffix)), None)


def _answer(request: Request, context: dict[str, Any], status_code: int = 200
            ) -> HTMLResponse:
    response = page(request, "explore.html", context, status_code=status_code)
    issuer = urlsplit(request.app.state.web.sign_in.issuer)
    response.headers["Content-Security-Policy"] = EXPLORE_CSP.format(
        provider=f"{issuer.scheme}://{issuer.netloc}")
    return response


@router.get("/ui/explore")
async def explore(
    request: Request,
    source: Annotated[str | None, Query(max_length=4096)] = None,
    collection: Annotated[str | None, Query(max_length=256)] = None,
    item: Annotated[str | None, Query(max_length=1024)] = None,
    authorization: str | None = Header(default=None),
) -> HTMLResponse:
    face = request.app.state.web
    context: dict[str, Any] = {"source": source or "", "name": file_name(source or ""),
                               "item": None, "error": None, "hidden": False}
    if not source or (collection is None) != (item is None):
        context["error"] = {"description": "Nothing to explore: the address names a file "
                            "(`source`), and the item it belongs to (`collection`, `item`) "
                            "or none (a job's file)."}
        return _answer(request, context, 400)
    if collection is None or item is None:  # a job's file: read with the user's token
        context.update(views="explore/", format=format_of(source), heading=context["name"])
        return _answer(request, context)
    path = f"{face.data_prefix}/collections/{quote(collection, safe='')}/items/" \
           f"{quote(item, safe='')}"
    context.update(views=f"{path.lstrip('/')}/explore/", heading=context["name"],
                   format=format_of(source),
                   item={"collection": collection, "id": item,
                         "page": f"browser/collections/{quote(collection, safe='')}/items/"
                                 f"{quote(item, safe='')}"})
    status, body = await get_json(request, path, authorization=authorization)
    if status != 200:  # hidden from this caller or missing: the same page
        context.update(hidden=True, error=body if isinstance(body, dict) else
                       {"description": f"The item answered {status}."})
        return _answer(request, context, 404 if status == 404 else status)
    asset = next((a for a in (body.get("assets") or {}).values()
                  if isinstance(a, dict) and a.get("href") == source), None)
    if asset is None:
        context["error"] = {"description": f"Item {item} has no asset at {source}."}
        return _answer(request, context, 404)
    title = (body.get("properties") or {}).get("title") or item
    context.update(heading=asset.get("title") or context["name"], item_title=title,
                   format=format_of(source, asset.get("type")))
    return _answer(request, context)
