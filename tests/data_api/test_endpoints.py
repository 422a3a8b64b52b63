"""The read and write routes whose request models their endpoints build
(`data_api/stock.py`) declare exactly what stock's do."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from stac_fastapi.pgstac.app import instantiate_api as stock_instantiate_api
from stac_fastapi.types.search import APIRequest

from stac_ext.app import build_auth, data_extensions
from stac_ext.data_api.read_client import CoreClient
from stac_ext.data_api.stock import create_async_endpoint
from stac_ext.settings import Settings

ITEM = "/data/collections/{collection_id}/items/{item_id}"
ITEMS = "/data/collections/{collection_id}/items"


@contextlib.asynccontextmanager
async def _no_lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield


def _operation(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    """What a route declares itself (our app completes the responses of every route)."""
    operation = document["paths"][path][method]
    return {"summary": operation["summary"], "operationId": operation["operationId"],
            "parameters": operation["parameters"]}


async def test_routes_declare_what_stock_declares(settings: Settings, service_app) -> None:
    async with service_app() as service:
        ours = service.app.openapi()
    auth, _ = build_auth(settings)
    stock = stock_instantiate_api(client=CoreClient, extensions=data_extensions(settings, auth),
                                  lifespan=_no_lifespan, settings=settings).app.openapi()
    for path, method in ((ITEM, "get"), (ITEMS, "get"), ("/data/search", "get")):
        assert _operation(ours, path, method) == _operation(stock, path, method), path
    # the same query parameters, with their own descriptions and schemas
    names = {p["name"] for p in ours["paths"]["/data/search"]["get"]["parameters"]}
    assert {"bbox", "datetime", "limit", "owner", "filter", "sortby", "fields"} <= names


def test_an_endpoint_takes_its_request_models_parameters() -> None:
    class Point(APIRequest):  # an attrs-style request model with annotated parameters
        def __init__(self, x: int, label: str = "p") -> None:
            self.x, self.label = x, label

    async def handler(request: Any, x: int, label: str) -> dict[str, Any]:
        return {"request": request, "x": x, "label": label}

    endpoint = create_async_endpoint(handler, Point)
    assert asyncio.iscoroutinefunction(endpoint)
    parameters = endpoint.__signature__.parameters  # type: ignore[attr-defined]
    assert [(name, p.annotation) for name, p in parameters.items()] == [
        ("request", Request), ("x", int), ("label", str)]
    assert parameters["label"].default == "p"
    assert asyncio.run(endpoint(request="r", x=3)) == {"request": "r", "x": 3, "label": "p"}
