"""The sessions in PostgreSQL: opened, found, refreshed under a row lock, closed, swept.
Keyed by the SHA-256 of the cookie's value; the tokens sealed."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg

from stac_ext.platform.sessions import queries
from stac_ext.platform.sessions.provider import Tokens
from stac_ext.platform.sessions.sealing import Seal, Unsealed
from stac_ext.platform.sessions.signed_in import SignedIn


@dataclass(frozen=True)
class Stored:
    """A session as stored, its tokens opened."""

    signed_in: SignedIn
    access: str
    access_expires: float
    refresh: str | None
    refresh_expires: float | None


def id_hash(cookie: str) -> bytes:
    return hashlib.sha256(cookie.encode("utf-8", "replace")).digest()


class SessionStore:
    """`pool`: the API's pool, once the app has opened it (asked per use)."""

    def __init__(self, pool: Callable[[], asyncpg.Pool], seal: Seal,
                 timeout: float = 10) -> None:
        self._pool = pool
        self._seal = seal
        self._timeout = timeout

    async def open(self, who: SignedIn, tokens: Tokens) -> str:
        """A new session: the cookie's value (never stored)."""
        cookie = secrets.token_urlsafe(32)
        async with self._pool().acquire(timeout=self._timeout) as conn:
            await conn.execute(queries.SWEEP)
            await conn.execute(queries.OPEN, id_hash(cookie), *self._row(who, tokens),
                               who.expires.timestamp())
        return cookie

    async def find(self, cookie: str) -> Stored | None:
        async with self._pool().acquire(timeout=self._timeout) as conn:
            return self._stored(await conn.fetchrow(queries.FIND, id_hash(cookie)))

    @asynccontextmanager
    async def locked(self, cookie: str) -> AsyncIterator[tuple[Stored | None, Any]]:
        """The session locked for a refresh, and how to write it back (`write(who,
        tokens)`); the lock ends with the block."""
        key = id_hash(cookie)
        async with self._pool().acquire(timeout=self._timeout) as conn, conn.transaction():
            found = self._stored(await conn.fetchrow(queries.FIND_LOCKED, key))

            async def write(who: SignedIn, tokens: Tokens) -> None:
                await conn.execute(queries.REFRESHED, key, *self._row(who, tokens))

            yield found, write

    async def close(self, cookie: str) -> None:
        async with self._pool().acquire(timeout=self._timeout) as conn:
            await conn.execute(queries.CLOSE, id_hash(cookie))

    def _row(self, who: SignedIn, tokens: Tokens) -> tuple[Any, ...]:
        sealed = self._seal.seal({"access_token": tokens.access,
                                  "refresh_token": tokens.refresh})
        return (who.username, list(who.groups), list(who.rights), sealed,
                tokens.access_expires, tokens.refresh_expires)

    def _stored(self, row: asyncpg.Record | None) -> Stored | None:
        if row is None:
            return None
        try:
            tokens = self._seal.open(row["tokens"])
        except Unsealed:  # sealed with a key since replaced: as good as none
            return None
        who = SignedIn(username=row["username"], groups=tuple(row["groups"]),
                       rights=tuple(row["rights"]),
                       expires=datetime.fromtimestamp(float(row["expires"]), UTC))
        refresh_expires = row["refresh_expires"]
        return Stored(signed_in=who, access=str(tokens.get("access_token") or ""),
                      access_expires=float(row["access_expires"]),
                      refresh=tokens.get("refresh_token") or None,
                      refresh_expires=float(refresh_expires)
                      if refresh_expires is not None else None)
