"""The `/data` STAC API: stock stac-fastapi-pgstac, built with our clients and extensions."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from functools import partial

from fastapi import Depends, FastAPI, HTTPException, Request
from stac_fastapi.api.app import StacApi
from stac_fastapi.api.models import JSONResponse
from stac_fastapi.extensions import BulkTransactionExtension
from stac_fastapi.extensions.query import QueryConformanceClasses
from stac_fastapi.pgstac.app import instantiate_api
from stac_fastapi.pgstac.models.extensions import Extensions
from stac_fastapi.types.extension import ApiExtension

from stac_ext.auth import AuthDependencies
from stac_ext.content import ItemDecorator
from stac_ext.content.routes import ExampleExtension
from stac_ext.core import CoreClient
from stac_ext.owner import OwnerSearchExtension
from stac_ext.policy import DataPolicy
from stac_ext.query_ext import FullQueryExtension
from stac_ext.query_params import no_unknown_query_params
from stac_ext.search_lists import SingleValueListsExtension
from stac_ext.settings import Settings
from stac_ext.transaction_extension import ItemTransactionExtension
from stac_ext.transactions import BulkTransactionsClient, TransactionsClient


@dataclass
class DataExtensions(Extensions):
    """Stock default extensions, with our transactions, `owner` search and own extensions."""

    policy: DataPolicy | None = None
    decorator: ItemDecorator | None = None
    own: list[ApiExtension] = field(default_factory=list)
    on_item_delete: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.search_map = {"query": FullQueryExtension(),
                           "single_value_lists": SingleValueListsExtension(), **self.search_map}
        self.item_collection_map = {
            "query": FullQueryExtension(conformance_classes=[QueryConformanceClasses.ITEMS]),
            **self.item_collection_map}
        if self.settings.owner_search:
            self.search_map = {"owner": OwnerSearchExtension(), **self.search_map}
        super().__post_init__()

    @property
    def transaction(self) -> list[ApiExtension]:
        if not self.settings.enable_transactions_extensions or self.policy is None:
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
    def extra(self) -> list[ApiExtension]:
        return [*super().extra, ExampleExtension(), *self.own]


def build_data_api(
    settings: Settings,
    auth: AuthDependencies,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]],
    extensions: list[ApiExtension] | None = None,
    on_item_delete: list[str] | None = None,
) -> StacApi:
    """The STAC API with its routes under `settings.prefix_path` (`/data`) on a new app."""
    decorator = ItemDecorator(settings.explorer_url_template, settings.notebook_url_template) \
        if settings.generated_content else None
    policy = DataPolicy(auth=auth, client_id=settings.data_client_id)

    api = instantiate_api(
        client=partial(CoreClient, decorator=decorator),  # type: ignore[arg-type]
        extensions=DataExtensions(settings=settings, policy=policy, decorator=decorator,
                                  own=extensions or [], on_item_delete=on_item_delete or []),
        lifespan=lifespan,
        settings=settings,
    )
    prefix = settings.prefix_path
    api.add_route_dependencies(
        scopes=[{"path": f"{prefix}/search", "method": "POST"},
                {"path": f"{prefix}/collections", "method": "POST"},
                {"path": f"{prefix}/collections/{{collection_id}}", "method": "PUT"},
                {"path": f"{prefix}/collections/{{collection_id}}/items", "method": "POST"},
                {"path": f"{prefix}/collections/{{collection_id}}/items/{{item_id}}",
                 "method": "PUT"}],
        dependencies=[Depends(json_object_body)],
    )
    api.add_route_dependencies(
        scopes=[{"path": f"{prefix}/collections/{{collection_id}}/items", "method": "GET"},
                {"path": f"{prefix}/collections/{{collection_id}}/items/{{item_id}}",
                 "method": "GET"}],
        dependencies=[Depends(no_unknown_query_params)],
    )
    return api


async def json_object_body(request: Request) -> None:
    """These bodies are JSON objects: say so before stac-pydantic's validators (which assume
    a dict and would fail with a 500) see anything else."""
    try:
        body = await request.json()
    except ValueError:
        return  # malformed JSON: FastAPI's own validation answers it (400)
    if not isinstance(body, dict):
        raise HTTPException(status_code=400, detail="The request body must be a JSON object.")
