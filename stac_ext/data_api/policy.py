"""Who may write what in the data API: item owners, and admins for collections."""

from __future__ import annotations

from dataclasses import dataclass

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
