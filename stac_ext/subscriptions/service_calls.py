"""The service's own APIs called from inside it, as one of its users: a saved search
checked as its owner reads, a standing job submitted and followed as its owner. The
requests go to the service's app in this process with the user in their ASGI scope (the
data API's reader, the principal the auth dependencies take), which no client can set:
every rule and every answer is the API's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

from stac_ext.data_api.caller_reads import READER_KEY
from stac_ext.platform.auth.dependencies import PRINCIPAL_KEY
from stac_ext.platform.auth.principal import Principal


class _As:
    def __init__(self, app: ASGIApp, keys: dict[str, Any]) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app({**scope, **self.keys}, receive, send)


def user_principal(owner: str, reader: dict[str, Any] | None, clients: frozenset[str]
                   ) -> Principal:
    """The owner of a subscription as the APIs' auth takes her: her name and the groups she
    had when she saved it, no right (a standing job needs none; an administrator's runs
    as a user)."""
    groups = (reader or {}).get("groups") or []
    return Principal(username=owner, clients=clients, groups=frozenset(map(str, groups)),
                     realm_rights=frozenset(), client_rights={})


@asynccontextmanager
async def as_user(app: ASGIApp, service_url: str, reader: dict[str, Any] | None,
                  principal: Principal | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the service at `service_url` (its links are made for it) that reads as
    `reader` and, given `principal`, acts as them."""
    keys: dict[str, Any] = {READER_KEY: reader}
    if principal is not None:
        keys[PRINCIPAL_KEY] = principal
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=_As(app, keys)),
                                 base_url=service_url.rstrip("/"), timeout=None) as client:
        yield client


def said(response: httpx.Response) -> str:
    """What an API answered, in its own words."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        for key in ("description", "detail", "title"):
            if isinstance(body.get(key), str):
                return str(body[key])
    return f"HTTP {response.status_code}"
