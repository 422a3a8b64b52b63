"""The `/data` STAC API: stock stac-fastapi-pgstac, built with our clients and extensions."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from fastapi import FastAPI
from stac_fastapi.api.app import StacApi
from stac_fastapi.api.models import JSONResponse
from stac_fastapi.extensions import BulkTransactionExtension
from stac_fastapi.pgstac.app import instantiate_api
from stac_fastapi.pgstac.core import CoreCrudClient
from stac_fastapi.pgstac.models.extensions import Extensions
from stac_fastapi.pgstac.transactions import BulkTransactionsClient
from stac_fastapi.types.extension import ApiExtension

from stac_ext.settings import Settings
from stac_ext.transactions import ItemTransactionExtension, TransactionsClient


@dataclass
class DataExtensions(Extensions):
    """Stock default extensions; transactions are ours, `extra` holds our own extensions."""

    own: list[ApiExtension] = field(default_factory=list)

    @property
    def transaction(self) -> list[ApiExtension]:
        if not self.settings.enable_transactions_extensions:
            return []
        return [
            ItemTransactionExtension(
                client=TransactionsClient(), settings=self.settings, response_class=JSONResponse
            ),
            BulkTransactionExtension(client=BulkTransactionsClient()),
        ]

    @property
    def extra(self) -> list[ApiExtension]:
        return [*super().extra, *self.own]


def build_data_api(
    settings: Settings,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]],
    extensions: list[ApiExtension] | None = None,
) -> StacApi:
    """The STAC API with its routes under `settings.prefix_path` (`/data`) on a new app."""
    return instantiate_api(
        client=CoreCrudClient,
        extensions=DataExtensions(settings=settings, own=extensions or []),
        lifespan=lifespan,
        settings=settings,
    )
