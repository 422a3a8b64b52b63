"""The `/data` STAC API: stock stac-fastapi-pgstac, built with our clients and extensions.

Our extensions go through stock's extension maps (`search_map`, `item_collection_map`,
`extra_map`), so `ENABLED_EXTENSIONS` switches them as it switches stock's (keys: `owner`,
`single_value_lists`, and those the composition root puts in `extra_map`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from stac_fastapi.api.app import StacApi
from stac_fastapi.api.models import JSONResponse
from stac_fastapi.extensions import BulkTransactionExtension
from stac_fastapi.extensions.query import QueryConformanceClasses
from stac_fastapi.pgstac.config import Settings
from stac_fastapi.pgstac.models.extensions import Extensions
from stac_fastapi.types.extension import ApiExtension

from stac_ext.data_api.datetime_param import valid_datetime
from stac_ext.data_api.item_links import Decorator
from stac_ext.data_api.policy import DataPolicy
from stac_ext.data_api.read_client import CoreClient
from stac_ext.data_api.rendered_items import RenderedItems
from stac_ext.data_api.search.owner import OwnerSearchExtension
from stac_ext.data_api.search.query_operators import FullQueryExtension
from stac_ext.data_api.search.single_value_lists import SingleValueListsExtension
from stac_ext.data_api.stac_api import instantiate_api
from stac_ext.data_api.unknown_params import no_unknown_query_params
from stac_ext.data_api.write_client import BulkTransactionsClient, TransactionsClient
from stac_ext.data_api.write_routes import ItemTransactionExtension


@dataclass
class DataExtensions(Extensions):
    """Stock's extensions, with ours in its maps and our transaction clients."""

    policy: DataPolicy = field(kw_only=True)
    decorator: Decorator | None = None
    #: Items kept as served, for every client of the API (item pages, searches, scopes)
    rendered: RenderedItems | None = None
    owner_search: bool = True
    #: SQL run in an item delete's transaction with ($1 collection, $2 item)
    on_item_delete: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.search_map = {"query": FullQueryExtension(),
                           "single_value_lists": SingleValueListsExtension(), **self.search_map}
        self.item_collection_map = {
            "query": FullQueryExtension(conformance_classes=[QueryConformanceClasses.ITEMS]),
            **self.item_collection_map}
        if self.owner_search:
            self.search_map = {"owner": OwnerSearchExtension(), **self.search_map}
        super().__post_init__()

    @property
    def transaction(self) -> list[ApiExtension]:
        """Stock's switch (`ENABLE_TRANSACTIONS_EXTENSIONS`), our clients and routes: stock
        offers no map for these."""
        if not self.settings.enable_transactions_extensions:
            return []
        writer = [Depends(self.policy.auth.client(self.policy.client_id))]
        return [
            ItemTransactionExtension(
                client=TransactionsClient(policy=self.policy, decorator=self.decorator,
                                          on_item_delete=self.on_item_delete),
                settings=self.settings, response_class=JSONResponse, route_dependencies=writer,
            ),
            BulkTransactionExtension(client=BulkTransactionsClient(policy=self.policy),
                                     route_dependencies=writer),
        ]

    @property
    def catalog(self) -> list[ApiExtension]:
        """Stock's catalogs extension, only when asked for (stock would log at every start
        that it is off; the settings refuse it beside our catalogs tree)."""
        return super().catalog if self.settings.enable_catalogs_extension else []


def build_data_api(
    settings: Settings,
    extensions: DataExtensions,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]],
) -> StacApi:
    """The STAC API with its routes under `settings.prefix_path` (`/data`) on a new app."""
    api = instantiate_api(
        client=partial(CoreClient, decorator=extensions.decorator,  # type: ignore[arg-type]  # stock asks for the class; a partial makes the same
                       rendered=extensions.rendered),
        extensions=extensions, lifespan=lifespan, settings=settings,
    )
    prefix = settings.prefix_path
    item = f"{prefix}/collections/{{collection_id}}/items/{{item_id}}"
    api.add_route_dependencies(
        scopes=[{"path": f"{prefix}/search", "method": "POST"},
                {"path": f"{prefix}/collections", "method": "POST"},
                {"path": f"{prefix}/collections/{{collection_id}}", "method": "PUT"},
                {"path": f"{prefix}/collections/{{collection_id}}/items", "method": "POST"},
                {"path": f"{prefix}/collections/{{collection_id}}/bulk_items",
                 "method": "POST"},
                {"path": item, "method": "PUT"},
                {"path": f"{prefix}/catalogs", "method": "POST"},
                {"path": f"{prefix}/catalogs/{{path:path}}", "method": "POST"},
                {"path": f"{prefix}/catalogs/{{path:path}}", "method": "PUT"},
                {"path": f"{prefix}/catalogs/{{path:path}}/_search", "method": "POST"}],
        dependencies=[Depends(json_object_body)],
    )
    api.add_route_dependencies(
        scopes=[{"path": f"{prefix}/collections/{{collection_id}}/items", "method": "GET"},
                {"path": f"{prefix}/collections/{{collection_id}}/items/{{item_id}}",
                 "method": "GET"}],
        dependencies=[Depends(no_unknown_query_params)],
    )
    api.add_route_dependencies(
        scopes=[{"path": f"{prefix}/search", "method": "GET"},
                {"path": f"{prefix}/collections", "method": "GET"},
                {"path": f"{prefix}/collections/{{collection_id}}/items", "method": "GET"},
                {"path": f"{prefix}/catalogs/{{path:path}}/_search", "method": "GET"}],
        dependencies=[Depends(valid_datetime)],
    )
    return api


#: Deeper bodies are refused: nothing in STAC nests this far, and the JSON encoders that
#: serve what is stored stop at 255 levels.
MAX_JSON_DEPTH = 64


def _non_finite(constant: str) -> float:
    raise ValueError(f"{constant} is not a JSON number: numbers must be finite")


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in `value`, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node \
            if isinstance(node, list) else ()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            if depth > MAX_JSON_DEPTH:
                return depth
            stack.extend((child, depth + 1) for child in children)
    return deepest


async def json_object_body(request: Request) -> None:
    """These bodies are JSON objects of finite numbers, nested at most MAX_JSON_DEPTH deep:
    say so (400) before stac-pydantic's validators (which assume a dict and would fail with
    a 500) or the database see anything else."""
    raw = await request.body()
    try:
        body = json.loads(raw, parse_constant=_non_finite)
    except ValueError as e:
        if "not a JSON number" in str(e):
            raise HTTPException(status_code=400, detail=str(e)) from None
        return  # malformed JSON: FastAPI's own validation answers it (400)
    if not isinstance(body, dict):
        raise HTTPException(status_code=400, detail="The request body must be a JSON object.")
    # fewer brackets than the limit cannot nest deeper than it (a single item: no walk)
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and _depth(body) > MAX_JSON_DEPTH:
        raise HTTPException(status_code=400, detail=f"The request body nests deeper than "
                            f"{MAX_JSON_DEPTH} levels.")
