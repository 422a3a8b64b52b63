"""The explorer over HTTP: an item's asset's views and its quicklook, under the item in the
data API (`.../items/{i}/explore/{view}?source=<asset href>`, `.../items/{i}/thumbnail.png`),
read as the caller as every read of the item is (a hidden item is a missing one, byte for
byte); and a job's own file's views (`/explore/{view}?source=<file href>`), read as the
process API lets the caller read that file."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import attr
from fastapi import APIRouter, FastAPI, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from stac_fastapi.types.errors import NotFoundError
from stac_fastapi.types.extension import ApiExtension

from stac_ext.content.formats import asset_format
from stac_ext.data_api.item_reads import read_item
from stac_ext.data_api.policy import reader_of, reader_text
from stac_ext.explorer.own_files import job_file, status_for
from stac_ext.explorer.problems import ExploreError
from stac_ext.explorer.quicklooks import EVERYONE, Quicklooks, audience_of
from stac_ext.explorer.service import Choice, Explorer
from stac_ext.explorer.sources import Source

View = Literal["info", "map", "series", "rows", "chart", "points"]
#: The longest asset address, variable or column list taken.
HREF_CHARS, NAME_CHARS = 4096, 256
#: JSON views are the caller's own: never kept by a shared cache.
PRIVATE = {"Cache-Control": "private, no-store"}
#: A quicklook: kept a moment by the browser, never by a shared cache (it answers as its
#: caller, whose token or sign-in it varies by).
PICTURE = {"Cache-Control": "private, max-age=300", "Vary": "Authorization, Cookie"}


def _choice(variable: str | None, time: int | None, level: int | None, x: float | None,
            y: float | None, offset: int, limit: int, columns: str | None,
            column: str | None, by: str | None) -> Choice:
    return Choice(variable=variable, time=time, level=level, x=x, y=y, offset=offset,
                  limit=limit, columns=tuple(c.strip() for c in (columns or "").split(",")
                                             if c.strip()),
                  x_column=by, y_column=column)


#: The query of every view (each reads what it needs).
Variable = Annotated[str | None, Query(max_length=NAME_CHARS, description=(
    "map, series: the variable (default: the first that can be mapped)"))]
TimeIndex = Annotated[int | None, Query(ge=0, le=10**9, description=(
    "map: the time step's index (default 0)"))]
LevelIndex = Annotated[int | None, Query(ge=0, le=10**9, description=(
    "map, series: the index along the variable's other dimension (default 0)"))]
Coordinate = Annotated[float | None, Query(ge=-1e9, le=1e9, allow_inf_nan=False, description=(
    "series: the point, in the grid's own coordinates (longitude x, latitude y)"))]
Offset = Annotated[int, Query(ge=0, le=10**13, description="rows: the first row (from 0)")]
Limit = Annotated[int, Query(ge=1, le=500, description="rows: rows on the page")]
Columns = Annotated[str | None, Query(max_length=8192, description=(
    "rows: the columns to read, comma-separated (default: all)"))]
Column = Annotated[str | None, Query(max_length=NAME_CHARS, description=(
    "chart: the column of numbers drawn; points: the value each point shows"))]
By = Annotated[str | None, Query(max_length=NAME_CHARS, description=(
    "chart: the column along x (default: the time column, else the row number)"))]
SourceHref = Annotated[str, Query(min_length=1, max_length=HREF_CHARS, description=(
    "the asset's address (its `href`), as the item names it"))]


def _refused(error: ExploreError) -> HTTPException:
    return HTTPException(status_code=error.status, detail=error.message)


def _origins(request: Request) -> set[str]:
    return {f"{request.base_url.scheme}://{request.base_url.netloc}".lower()}


async def _may_read_file(request: Request, path: str, name: str) -> None:
    """The process API's answer to the caller for a job's file: 200, or the explorer says
    why not."""
    authorization = request.headers.get("authorization")
    status = await status_for(request.app, path, authorization)
    if status == 403 and authorization:  # a token of the data API's only: as anyone, then
        authorization = None
        status = await status_for(request.app, path, None)
    if status == 200:
        return
    # asked without a token, a file nobody reads so is a 401 (missing or not)
    if status == 403 or (status == 401 and authorization):
        raise ExploreError(403, f"{name} is a job's file: reading it takes a token the "
                           "process API takes (a sign-in in the browser has one).")
    raise ExploreError(404, f"{name} is not a job's file you may read.")


@attr.s
class ExplorerExtension(ApiExtension):
    """The data API's routes of the explorer (an item's assets; `ENABLED_EXTENSIONS` key
    `explorer`). `jobs_router` makes the routes of a job's files, outside the data API."""

    explorer: Explorer = attr.ib()
    processes_prefix: str = attr.ib(default="/processes")
    conformance_classes: list[str] = attr.ib(factory=list)
    schema_href: str | None = attr.ib(default=None)

    @property
    def quicklooks(self) -> Quicklooks:
        return Quicklooks(self.explorer)

    async def _item(self, request: Request, collection_id: str, item_id: str
                    ) -> dict[str, Any]:
        """The item as the caller reads it; one they may not read is a missing one."""
        async with request.app.state.get_connection(request, "r") as conn:
            item = await read_item(conn, collection_id, item_id, reader_of(request))
        if item is None:
            raise NotFoundError(f"Item {item_id} in Collection {collection_id} does not exist.")
        return item

    async def _source(self, request: Request, href: str, asset: dict[str, Any]) -> Source:
        """The asset as the explorer reads it; a job's file of this service once the process
        API lets the caller read it."""
        fmt = asset_format(asset)
        name = href.rstrip("/").rsplit("/", 1)[-1]
        if fmt is None:
            raise ExploreError(422, f"{name} is not a Zarr, NetCDF, Parquet or CSV file.")
        own = job_file(href, self.processes_prefix, _origins(request))
        if own is None:
            return Source(href, fmt)
        await _may_read_file(request, own.path, name)
        return Source(href, fmt, own.key)

    def register(self, app: FastAPI) -> None:
        router = APIRouter(prefix=app.state.router_prefix, tags=["Data explorer"])
        router.add_api_route(
            "/collections/{collection_id}/items/{item_id}/explore/{view}", self._item_view,
            methods=["GET"], summary="A view of one of the item's assets (data explorer)",
            description="`info`: what a Zarr or NetCDF holds (variables, dimensions, "
            "attributes, sizes) or a Parquet or CSV file's schema and row count; `map`: a "
            "variable at a time and level, as a PNG with its extent and colour scale; "
            "`series`: its values over time at a point; `rows`: a page of rows; `chart`: a "
            "column of numbers against time or another column; `points`: where the rows "
            "are. Read chunk-wise (whole chunks, the columns and row groups needed), within "
            "EXPLORER_READ_BYTES and EXPLORER_SECONDS.")
        router.add_api_route(
            "/collections/{collection_id}/items/{item_id}/thumbnail.png", self._thumbnail,
            methods=["GET"], summary="The item's quicklook (PNG)",
            response_class=Response, responses={200: {"content": {"image/png": {}}}},
            description="A map of the item's variable (its time mean, or its first time "
            "step) with its colour bar and units, or a table's points or chart; drawn once "
            "and kept in the results store.")
        app.include_router(router)

    async def _answer(self, work: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await work()
        except ExploreError as e:
            raise _refused(e) from None

    async def _item_view(
        self, request: Request, view: View,
        collection_id: Annotated[str, Path(max_length=NAME_CHARS)],
        item_id: Annotated[str, Path(max_length=1024)],
        source: SourceHref, variable: Variable = None, time: TimeIndex = None,
        level: LevelIndex = None, x: Coordinate = None, y: Coordinate = None,
        offset: Offset = 0, limit: Limit = 50, columns: Columns = None,
        column: Column = None, by: By = None,
    ) -> JSONResponse:
        async def work() -> JSONResponse:
            item = await self._item(request, collection_id, item_id)
            asset = next((a for a in (item.get("assets") or {}).values()
                          if isinstance(a, dict) and a.get("href") == source), None)
            if asset is None:
                raise ExploreError(404, f"Item {item_id} has no asset at {source}.")
            found = await self.explorer.view(
                await self._source(request, source, asset), view,
                _choice(variable, time, level, x, y, offset, limit, columns, column, by))
            return JSONResponse(found, headers=PRIVATE)

        return await self._answer(work)

    async def _thumbnail(self, request: Request,
                         collection_id: Annotated[str, Path(max_length=NAME_CHARS)],
                         item_id: Annotated[str, Path(max_length=1024)]) -> Response:
        async def work() -> Response:
            item = await self._item(request, collection_id, item_id)
            asset = self.quicklooks.asset(item)
            href = str(asset["href"])
            found = await self._source(request, href, asset)
            audience = EVERYONE
            own = job_file(href, self.processes_prefix, _origins(request))
            # a job's file that not everyone who reads the item may read (the process API
            # decides): the picture is kept for this reader only
            if own is not None and await status_for(request.app, own.path, None) != 200:
                audience = audience_of(reader_text(reader_of(request)))
            png = await self.quicklooks.png(collection_id, item, found, audience)
            return Response(png, media_type="image/png", headers=PICTURE)

        return await self._answer(work)

    def jobs_router(self) -> APIRouter:
        """`/explore/{view}?source=<a job's file>`: a job's file before it is published, as
        the process API lets the caller read it."""
        router = APIRouter(tags=["Data explorer"])

        async def job_view(
            request: Request, view: View, source: SourceHref,
            variable: Variable = None, time: TimeIndex = None, level: LevelIndex = None,
            x: Coordinate = None, y: Coordinate = None, offset: Offset = 0,
            limit: Limit = 50, columns: Columns = None, column: Column = None,
            by: By = None,
        ) -> JSONResponse:
            async def work() -> JSONResponse:
                own = job_file(source, self.processes_prefix, _origins(request))
                if own is None:
                    raise ExploreError(400, "Only a job's file of this service is explored "
                                       "here; an item's asset is explored under the item "
                                       "(.../items/{id}/explore/{view}).")
                found = await self._source(request, source, {"href": source})
                answer = await self.explorer.view(found, view, _choice(
                    variable, time, level, x, y, offset, limit, columns, column, by))
                return JSONResponse(answer, headers=PRIVATE)

            return await self._answer(work)

        router.add_api_route("/explore/{view}", job_view, methods=["GET"],
                             summary="A view of a job's file (data explorer)",
                             description="As an item's asset's views, for a file a job "
                             "wrote (`source`: its href in the job's results), for whoever "
                             "may read that file.")
        return router
