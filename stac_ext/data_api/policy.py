"""Who may read and write what in the data API, as the access table says
(`stac_ext.platform.access`): items by their visibility, collections by administrators; a
request's caller as the item write rule takes them (`item_writers`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import HTTPException, Request

from stac_ext.data_api.caller_reads import READER_KEY
from stac_ext.data_api.item_writers import ItemWriter
from stac_ext.platform.access import Caller, Resource, require
from stac_ext.platform.auth.dependencies import AuthDependencies
from stac_ext.platform.auth.principal import Principal

#: Collections as the access table takes them: one rule for all.
COLLECTIONS = Resource("collection")


@dataclass(frozen=True)
class DataPolicy:
    """Decisions on an authenticated request (the route dependency put the principal)."""

    auth: AuthDependencies
    client_id: str

    def principal(self, request: Request) -> Principal:
        principal = getattr(request.state, "principal", None)
        if principal is None:  # a write route registered without the auth dependency
            raise HTTPException(status_code=401, detail="Authentication required.",
                                headers={"WWW-Authenticate": "Bearer"})
        return principal

    def is_admin(self, principal: Principal) -> bool:
        return self.auth.is_admin(principal, self.client_id)

    def caller(self, principal: Principal | None) -> Caller:
        """The caller as the access table takes them."""
        return self.auth.caller(principal, self.client_id)

    def require_collection_change(self, request: Request) -> None:
        """403 unless the caller may write collections (create, change, delete, or decide
        a proposal for one)."""
        require(self.caller(self.principal(request)), "change", COLLECTIONS)

    def writer(self, principal: Principal) -> ItemWriter:
        """The caller as the item write rule takes them (`item_writers`)."""
        return ItemWriter(principal.username, principal.groups,
                          principal.rights_for(self.client_id), self.is_admin(principal))

    def reader(self, principal: Principal | None) -> dict[str, Any] | None:
        """Who reads, as the database's visibility rule takes it (`reader` of a search)."""
        return self.caller(principal).reader

    def read_dependency(self) -> Callable[..., Awaitable[None]]:
        """The dependency of every read route: the caller (an optional token of the data
        API's client; a bad one is a 401) as `request.state.reader`, which every read's
        SQL takes (`reader_of`)."""
        caller = self.auth.optional_client(self.client_id)

        async def dependency(request: Request) -> None:  # one dependency: reads are hot
            if READER_KEY in request.scope:  # the service reading as a caller
                request.state.reader = request.scope[READER_KEY]
                return
            request.state.reader = self.reader(await caller(request))

        return dependency


def reader_of(request: Request) -> dict[str, Any] | None:
    """The caller of a read (`DataPolicy.read_dependency`); anonymous where none was set."""
    return getattr(request.state, "reader", None)


def reader_text(reader: dict[str, Any] | None) -> str:
    """A reader as the SQL functions take it (JSON text; `null`: anonymous)."""
    return orjson.dumps(reader).decode()
