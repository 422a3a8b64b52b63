"""`GET|POST /catalogs/{path}/_search`: item search limited to what a subtree links.

The search itself is the data API's (same parameters, same answer as `/search`, paging
included), handed in by the composition root as a `SubtreeSearch`; its statement is the
data API's search of `queries.SUBTREE_BODY`, one per page. No `from __future__ import
annotations` here: the routes' parameter models are the data API's, known only at run
time, and FastAPI reads them from the annotations.
"""

from collections.abc import Sequence
from typing import Annotated, Any, Protocol

from fastapi import APIRouter, Body, Depends, Path, Request
from starlette.responses import Response

from catalogs_ext.models import CATALOG_PATH


class SubtreeSearch(Protocol):
    """The data API's item search, of the body `queries.SUBTREE_BODY` makes for the
    route's `path`."""

    @property
    def get_model(self) -> type[Any]: ...  # stock's GET /search parameters (an APIRequest)
    @property
    def post_model(self) -> type[Any]: ...  # stock's POST /search body (a pydantic model)
    @property
    def conforms_to(self) -> Sequence[str]: ...

    async def get(self, request: Request, params: Any) -> Response: ...

    async def post(self, request: Request, body: Any) -> Response: ...


def search_router(prefix: str, search: SubtreeSearch) -> APIRouter:
    router = APIRouter(prefix=prefix)
    path_param = Path(description="The catalog's path of ids", pattern=CATALOG_PATH)

    async def get_search(path: Annotated[str, path_param], request: Request,
                         params: Annotated[Any, Depends(search.get_model)]) -> Response:
        return await search.get(request, params)

    async def post_search(path: Annotated[str, path_param], request: Request,
                          body: Annotated[Any, Body()]) -> Response:
        return await search.post(request, body)

    # the body model is the data API's: set on the annotation FastAPI reads
    post_search.__annotations__["body"] = Annotated[search.post_model, Body()]
    summary = "Search the items a catalog's subtree links (as /search does)"
    router.add_api_route("/{path:path}/_search", get_search, methods=["GET"],
                         summary=summary, response_class=Response)
    router.add_api_route("/{path:path}/_search", post_search, methods=["POST"],
                         summary=summary, response_class=Response)
    return router
