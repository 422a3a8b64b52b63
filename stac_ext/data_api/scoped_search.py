"""Item search limited to a scope (a catalog's subtree): the data API's read path with the
scope's statement, so answers, links, paging and generated content are `/search`'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from stac_fastapi.api.models import create_get_request_model
from stac_fastapi.types.conformance import STACConformanceClasses
from starlette.responses import Response

from stac_ext.data_api.api import DataExtensions
from stac_ext.data_api.read_client import CoreClient
from stac_ext.data_api.search.free_text import search_body


@dataclass(frozen=True)
class ScopedSearch:
    get_model: type[Any]
    post_model: type[Any]
    conforms_to: Sequence[str]
    client: CoreClient

    async def get(self, request: Request, params: Any) -> Response:
        return await self.client.get_search(request=request, **params.kwargs())

    async def post(self, request: Request, body: Any) -> Response:
        return await self.client.post_search(body, request=request)


def scoped_search(extensions: DataExtensions, statement: str, scope_param: str
                  ) -> ScopedSearch:
    """`/search`'s parameters (as stock builds them from the same extensions) answered by
    `statement`, which takes the search body and the route's `scope_param`."""
    post_model = search_body(extensions.search)
    classes = [STACConformanceClasses.CORE, STACConformanceClasses.ITEM_SEARCH,
               *(c for extension in extensions.search for c in extension.conformance_classes)]
    return ScopedSearch(
        get_model=create_get_request_model(extensions.search), post_model=post_model,
        conforms_to=list(dict.fromkeys(str(c) for c in classes)),
        client=CoreClient(pgstac_search_model=post_model, decorator=extensions.decorator,
                          rendered=extensions.rendered, search_statement=statement,
                          scope_param=scope_param),
    )
