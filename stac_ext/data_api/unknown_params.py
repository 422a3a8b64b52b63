"""OGC API Features (core, /req/core/query-param-unknown): a query parameter the endpoint
does not define is a 400, not silently ignored. Used as a route dependency on the
features endpoints; the known names are read from the route's own declared parameters."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Request
from fastapi.routing import APIRoute

#: pystac-client sends `collections` to the items endpoint too (redundant with the path):
#: refusing it would break the most used STAC client.
TOLERATED = frozenset({"collections"})
_known: dict[int, frozenset[str]] = {}


def _query_names(dependant: Any) -> set[str]:
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def _declared(route: APIRoute) -> frozenset[str]:
    """Per route, once (routes are not hashable: keyed by identity; they live as long as
    the app)."""
    names = _known.get(id(route))
    if names is None:
        names = _known[id(route)] = frozenset(_query_names(route.dependant))
    return names


async def no_unknown_query_params(request: Request) -> None:
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    known = _declared(route)
    if unknown := sorted(set(request.query_params) - known - TOLERATED):
        raise HTTPException(
            status_code=400,
            detail=f"Unknown query parameter(s): {', '.join(unknown)}. This endpoint takes: "
                   f"{', '.join(sorted(known)) or 'none'}.")
