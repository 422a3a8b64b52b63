"""Serves the generated Python examples that items' `rel: example` links point to."""

from __future__ import annotations

import attr
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import PlainTextResponse
from stac_fastapi.types.errors import NotFoundError
from stac_fastapi.types.extension import ApiExtension

from stac_ext.content.example import render_example
from stac_ext.data_api.item_reads import read_item
from stac_ext.data_api.policy import reader_of


@attr.s
class ExampleExtension(ApiExtension):
    """`GET /collections/{c}/items/{i}/example.py`: runnable xarray code for the item."""

    conformance_classes: list[str] = attr.ib(factory=list)
    schema_href: str | None = attr.ib(default=None)

    def register(self, app: FastAPI) -> None:
        router = APIRouter(prefix=app.state.router_prefix, tags=["Generated content"])

        @router.get(
            "/collections/{collection_id}/items/{item_id}/example.py",
            response_class=PlainTextResponse,
            responses={200: {"content": {"text/x-python": {}}}},
            summary="Python example opening the item's NetCDF / Zarr data with xarray",
        )
        async def example(collection_id: str, item_id: str, request: Request) -> PlainTextResponse:
            async with request.app.state.get_connection(request, "r") as conn:
                item = await read_item(conn, collection_id, item_id, reader_of(request))
            source = render_example(item) if item else None
            if source is None:
                raise NotFoundError(f"Item {item_id} in Collection {collection_id} has no "
                                    "NetCDF or Zarr data to open.")
            # a browser shows text/plain as a page to read and copy (text/x-python it may
            # offer to download); programs get the type the item's link names
            browser = "text/html" in request.headers.get("accept", "")
            return PlainTextResponse(
                source, media_type="text/plain" if browser else "text/x-python",
                headers={"Content-Disposition": 'inline; filename="example.py"'})

        app.include_router(router)
