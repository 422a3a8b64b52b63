"""The `owner` search parameter (GET and POST /search): items of one owner only.

It becomes a CQL2 `owner = <name>` clause AND-ed with the request's own filter (or a
`query` clause when the client uses the Query extension), which pgstac answers from the
`owner` queryable's index (migration 003).
"""

from __future__ import annotations

from typing import Annotated, Any

import attr
from fastapi import FastAPI, Query
from pydantic import BaseModel, Field
from stac_fastapi.types.extension import ApiExtension
from stac_fastapi.types.search import APIRequest

from stac_ext.data_api.search.filters import Search, with_clauses
from stac_ext.data_api.search.query_operators import Operator

#: Relative: the API serves it (`spec_pages.py`), and writes it against its own address
OWNER_CONFORMANCE = "spec/item-search-owner/v1.0"
OWNER_SPEC = ("Item search takes `owner` (GET parameter, POST field): the items whose "
              "`properties.owner` is that user name, AND-ed with every other criterion.")


@attr.s
class OwnerGetRequest(APIRequest):
    owner: Annotated[str | None, Query(description="User name of the items' owner.",
                                       min_length=1, max_length=256)] = attr.ib(default=None)


class OwnerPostRequest(BaseModel):
    owner: str | None = Field(default=None, min_length=1, max_length=256,
                              description="User name of the items' owner.")


@attr.s
class OwnerSearchExtension(ApiExtension):
    """Adds `owner` to the search request models; it has no routes of its own."""

    GET = OwnerGetRequest
    POST = OwnerPostRequest
    conformance_classes: list[str] = attr.ib(factory=lambda: [OWNER_CONFORMANCE])
    schema_href: str | None = attr.ib(default=None)

    def register(self, app: FastAPI) -> None:
        return None


def _owner_clause(owner: str) -> dict[str, Any]:
    return {"op": "=", "args": [{"property": "owner"}, owner]}


def fold_owner(search: Search) -> Search:
    """The search request with its `owner` turned into a filter (or query) clause."""
    owner = getattr(search, "owner", None)
    if not owner:
        return search
    query = getattr(search, "query", None)
    current = getattr(search, "filter_expr", None)
    if query and not current:
        return search.model_copy(update={"owner": None,
                                         "query": {**query, "owner": {Operator.eq: owner}}})
    return with_clauses(search, [_owner_clause(owner)], owner=None)
