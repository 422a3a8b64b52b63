"""Where verification keys come from: an issuer's JWKS over HTTP (cached), or a fixed set."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

import httpx
from joserfc.jwk import KeySet

logger = logging.getLogger(__name__)


class KeySource(Protocol):
    async def keys(self, refresh: bool = False) -> KeySet: ...


class StaticKeys:
    """A key set known in-process (the local development issuer)."""

    def __init__(self, key_set: KeySet) -> None:
        self._keys = key_set

    async def keys(self, refresh: bool = False) -> KeySet:
        return self._keys


class RemoteJwks:
    """The JWKS of an OIDC issuer: found by discovery (or given), fetched once, cached.

    `keys(refresh=True)` refetches, at most once per `min_refresh_seconds`, so a flood of
    tokens with unknown `kid`s cannot turn into a flood of requests to the issuer.
    """

    def __init__(self, issuer: str | None = None, jwks_url: str | None = None,
                 min_refresh_seconds: float = 30.0, timeout: float = 5.0) -> None:
        if not issuer and not jwks_url:
            raise ValueError("RemoteJwks needs an issuer or a JWKS URL")
        self._issuer = issuer.rstrip("/") if issuer else None
        self._jwks_url = jwks_url
        self._min_refresh = min_refresh_seconds
        self._timeout = timeout
        self._cached: KeySet | None = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def keys(self, refresh: bool = False) -> KeySet:
        stale = refresh and time.monotonic() - self._fetched_at >= self._min_refresh
        if self._cached is not None and not stale:
            return self._cached
        async with self._lock:
            if self._cached is None or (
                refresh and time.monotonic() - self._fetched_at >= self._min_refresh
            ):
                self._cached = await self._fetch()
                self._fetched_at = time.monotonic()
        return self._cached

    async def _fetch(self) -> KeySet:
        async with httpx.AsyncClient(timeout=self._timeout) as http:
            url = self._jwks_url
            if url is None:
                discovery = f"{self._issuer}/.well-known/openid-configuration"
                r = await http.get(discovery)
                r.raise_for_status()
                url = r.json()["jwks_uri"]
                self._jwks_url = url
            r = await http.get(url)
            r.raise_for_status()
            logger.info("fetched JWKS from %s", url)
            return KeySet.import_key_set(r.json())
