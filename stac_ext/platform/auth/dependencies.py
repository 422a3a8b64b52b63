"""FastAPI dependencies for protected routes: 401 for a bad token, 403 for a missing right.

Each dependency also leaves the caller on `request.state.principal` for the clients that
decide ownership (stac-fastapi passes them the request, not dependency results).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from stac_ext.platform.access import ANONYMOUS, Caller, lacking
from stac_ext.platform.auth.authenticator import Authenticator, Unauthenticated
from stac_ext.platform.auth.principal import Principal
from stac_ext.platform.service.errors import Forbidden

_bearer = HTTPBearer(auto_error=False, description="An OIDC access token (JWT).")
#: The ASGI scope key of a request the service makes itself as one of its users (a
#: standing job submitted as its owner): the principal, taken in place of a token. No
#: client can set an ASGI scope key.
PRINCIPAL_KEY = "geocatalog.principal"

PrincipalDependency = Callable[..., Awaitable[Principal]]


def _unauthorized(reason: str) -> HTTPException:
    return HTTPException(
        status_code=401, detail=f"Authentication required: {reason}.",
        headers={"WWW-Authenticate": f'Bearer error="invalid_token", error_description="{reason}"'},
    )


class AuthDependencies:
    """Builds the dependencies of protected routes from one authenticator."""

    def __init__(self, authenticator: Authenticator, admin_right: str) -> None:
        self.authenticator = authenticator
        self.admin_right = admin_right

    async def _principal(self, token: str | None) -> Principal:
        if token is None:
            raise HTTPException(status_code=401, detail="Authentication required: no token.",
                                headers={"WWW-Authenticate": "Bearer"})
        try:
            return await self.authenticator.authenticate(token)
        except Unauthenticated as e:
            raise _unauthorized(str(e)) from e
        except httpx.HTTPError as e:
            raise HTTPException(status_code=503, detail="The identity provider is "
                                "unavailable; retry shortly.") from e

    async def _authorized(self, request: Request, token: str | None, client_id: str,
                          right: str | None, *also: str) -> Principal:
        """The token's principal, when it was issued to `client_id` (or one of `also`)."""
        principal = request.scope.get(PRINCIPAL_KEY)
        if not isinstance(principal, Principal):
            principal = await self._principal(token)
        if client_id not in principal.clients and not principal.clients & set(also):
            raise Forbidden(f"This API needs a token issued to the client '{client_id}'.")
        if right and not self.holds(principal, client_id, right):
            raise Forbidden(lacking(right))
        request.state.principal = principal
        return principal

    def client(self, client_id: str, right: str | None = None) -> PrincipalDependency:
        """A valid token issued to `client_id` (and, if given, holding `right`)."""

        async def dependency(
            request: Request,
            credentials: HTTPAuthorizationCredentials | None = Depends(_bearer),
        ) -> Principal:
            return await self._authorized(
                request, None if credentials is None else credentials.credentials, client_id,
                right)

        return dependency

    def optional_client(self, client_id: str, *also: str
                        ) -> Callable[[Request], Awaitable[Principal | None]]:
        """A read's caller: None without a token (anonymous); with one, a valid token issued
        to `client_id` or one of `also` (401 / 403 as for writes: a bad token is never read
        as anonymous).
        The header is read here, not through HTTPBearer's dependency: every read runs this,
        and its cost showed on a single item's read (the OpenAPI document declares the
        scheme, `complete_openapi`)."""

        async def caller(request: Request) -> Principal | None:
            header = request.headers.get("authorization")
            if header is None and PRINCIPAL_KEY not in request.scope:
                return None
            if header is None:  # the service as one of its users
                return await self._authorized(request, None, client_id, None)
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise _unauthorized("only a Bearer token is accepted")
            return await self._authorized(request, token.strip(), client_id, None, *also)

        return caller

    def holds(self, principal: Principal, client_id: str, right: str) -> bool:
        """True when the principal holds `right` or the admin right for `client_id`."""
        rights = principal.rights_for(client_id)
        return right in rights or self.admin_right in rights

    def is_admin(self, principal: Principal, client_id: str) -> bool:
        return self.admin_right in principal.rights_for(client_id)

    def caller(self, principal: Principal | None, client_id: str) -> Caller:
        """The principal (None: anonymous) as the access table takes a caller of the API
        `client_id` serves."""
        if principal is None:
            return ANONYMOUS
        rights = principal.rights_for(client_id)
        return Caller(principal.username, principal.groups, rights, self.admin_right in rights)
