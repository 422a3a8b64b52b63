"""Who may read and write what in the data API: items by their visibility, item owners,
and admins for collections."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import HTTPException, Request

from stac_ext.auth import AuthDependencies, Principal


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

    def require_admin(self, request: Request) -> Principal:
        principal = self.principal(request)
        if not self.is_admin(principal):
            raise HTTPException(status_code=403, detail="Collections are governed by "
                                f"administrators: this needs the right '{self.auth.admin_right}'.")
        return principal

    def require_item_owner(self, request: Request, owner: str | None) -> Principal:
        principal = self.principal(request)
        if principal.username != owner and not self.is_admin(principal):
            raise HTTPException(status_code=403, detail="Only the item's owner or an "
                                "administrator may change it.")
        return principal

    def reader(self, principal: Principal | None) -> dict[str, Any] | None:
        """Who reads, as the database's visibility rule takes it (`reader` of a search,
        migration 009): None anonymous, {"all": true} an administrator, else the user and
        their groups."""
        if principal is None:
            return None
        if self.is_admin(principal):
            return {"all": True}
        return {"user": principal.username, "groups": sorted(principal.groups)}

    def read_dependency(self) -> Callable[..., Awaitable[None]]:
        """The dependency of every read route: the caller (an optional token of the data
        API's client; a bad one is a 401) as `request.state.reader`, which every read's
        SQL takes (`reader_of`)."""
        caller = self.auth.optional_client(self.client_id)

        async def dependency(request: Request) -> None:  # one dependency: reads are hot
            request.state.reader = self.reader(await caller(request))

        return dependency

    def check_visibility(self, principal: Principal, properties: dict[str, Any]) -> None:
        """An item may be put in a project (`visibility: project`) only by one of its
        members, or an administrator (403)."""
        project = properties.get("project")
        if properties.get("visibility") == "project" and project not in principal.groups \
                and not self.is_admin(principal):
            raise HTTPException(status_code=403, detail=f"You are not a member of the "
                                f"project {project!r}: only its members share items with it.")


def reader_of(request: Request) -> dict[str, Any] | None:
    """The caller of a read (`DataPolicy.read_dependency`); anonymous where none was set."""
    return getattr(request.state, "reader", None)


def reader_text(reader: dict[str, Any] | None) -> str:
    """A reader as the SQL functions take it (JSON text; `null`: anonymous)."""
    return orjson.dumps(reader).decode()
