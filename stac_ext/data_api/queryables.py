"""The queryables (`/queryables`, a collection's): stock's client, answering an empty
catalog's too."""

from __future__ import annotations

from typing import Any

import orjson
from stac_fastapi.pgstac.extensions.filter import FiltersClient
from stac_fastapi.types.errors import NotFoundError
from starlette.requests import Request

from stac_ext.data_api import queries


class QueryablesClient(FiltersClient):
    """Stock's. A catalog holding no collection yet has queryables all the same (pgstac
    answers none then, which stock took for a missing collection: a 404 'Collection None
    not found')."""

    async def get_queryables(  # type: ignore[override]  # stock's own signature
            self, request: Request, collection_id: str | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        try:
            return await super().get_queryables(request, collection_id, **kwargs)
        except NotFoundError:
            if collection_id is not None:
                raise
        async with request.app.state.get_connection(request, "r") as conn:
            queryables: dict[str, Any] = orjson.loads(
                await conn.fetchval(queries.CATALOG_QUERYABLES))
        queryables["$id"] = str(request.url)
        return queryables
