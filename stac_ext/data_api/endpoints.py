"""Endpoints whose request model is built in the event loop, not in FastAPI's thread pool.

stac-fastapi's request models (`ItemUri`, the items and GET /search models...) are attrs
classes used as dependencies, and FastAPI runs a class dependency in its thread pool: the
hop to a thread and back was about a quarter of a single item's CPU (profile, then a paired
run: single item 740 -> 1,007 req/s). `create_async_endpoint` is stock's, except that such
a model is built by an async function with the model's own signature (same parameters,
same validation, same OpenAPI).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, Request
from stac_fastapi.api.routes import create_async_endpoint as stock_endpoint
from stac_fastapi.types.search import APIRequest
from starlette.responses import Response


def built_in_loop(model: type[APIRequest]) -> Callable[..., Awaitable[APIRequest]]:
    """An async dependency that builds `model` from the same parameters."""
    hints = typing.get_type_hints(model.__init__, include_extras=True)
    signature = inspect.signature(model)
    signature = signature.replace(parameters=[
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in signature.parameters.values()])

    async def build(**values: Any) -> APIRequest:
        return model(**values)

    build.__signature__ = signature  # type: ignore[attr-defined]  # what FastAPI reads
    build.__name__ = f"build_{model.__name__}"
    return build


def create_async_endpoint(func: Callable[..., Any], request_model: Any
                          ) -> Callable[..., Awaitable[Any]]:
    """Stock's endpoint factory; an `APIRequest` model is built by `built_in_loop`."""
    if not (isinstance(request_model, type) and issubclass(request_model, APIRequest)
            and inspect.iscoroutinefunction(func)):
        return stock_endpoint(func, request_model)
    dependency = built_in_loop(request_model)

    # no return annotation: FastAPI would take it for a response model, as stock's has none
    async def endpoint(request: Request, request_data: Any = Depends(dependency)):
        response = await func(request=request, **request_data.kwargs())
        return Response(status_code=204) if response is None else response

    return endpoint
