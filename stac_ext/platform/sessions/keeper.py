"""A browser's session from sign-in to sign-out: opened from the tokens a code was traded
for (the access token checked as the APIs check it), found for each request and refreshed
shortly before its access token expires (one refresh at a time), closed."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx

from stac_ext.platform.auth.authenticator import Authenticator, Unauthenticated
from stac_ext.platform.auth.principal import Principal
from stac_ext.platform.sessions.provider import Provider, ProviderRefused, Tokens
from stac_ext.platform.sessions.signed_in import SignedIn
from stac_ext.platform.sessions.store import SessionStore, Stored

logger = logging.getLogger("geocatalog.sessions")

#: An access token this close to its end is refreshed before it is used
REFRESH_MARGIN = 30


class SignInFailed(Exception):
    """The sign-in could not be finished: the words for the person."""


def rights_of(principal: Principal) -> tuple[str, ...]:
    """Every right the token grants, realm-wide and per client."""
    held = set(principal.realm_rights)
    for rights in principal.client_rights.values():
        held |= rights
    return tuple(sorted(held))


@dataclass
class SessionKeeper:
    provider: Provider
    authenticator: Authenticator
    store: SessionStore
    lifetime: timedelta

    async def _who(self, tokens: Tokens, expires: datetime) -> SignedIn:
        try:
            principal = await self.authenticator.authenticate(tokens.access)
        except Unauthenticated as e:
            raise SignInFailed(f"the identity provider's token is not accepted here: {e}") \
                from e
        return SignedIn(username=principal.username, groups=tuple(sorted(principal.groups)),
                        rights=rights_of(principal), expires=expires)

    async def open(self, tokens: Tokens) -> tuple[str, SignedIn]:
        """A session for the tokens: the cookie's value, and who it signed in. Without a
        refresh token, it ends with the access token."""
        end = datetime.now(UTC) + self.lifetime
        if tokens.refresh is None:
            end = min(end, datetime.fromtimestamp(tokens.access_expires, UTC))
        who = await self._who(tokens, end)
        return await self.store.open(who, tokens), who

    async def current(self, cookie: str) -> Stored | None:
        """The live session of the cookie, its access token fresh; None: there is none (it
        ended, or could not be refreshed)."""
        found = await self.store.find(cookie)
        if found is None or found.access_expires - time.time() > REFRESH_MARGIN:
            return found
        refreshed, ended = await self._refreshed(cookie)
        if ended:
            await self.store.close(cookie)
        return refreshed

    async def _refreshed(self, cookie: str) -> tuple[Stored | None, bool]:
        """The session with a fresh access token, or None; and whether it ended (a
        provider that does not answer ends none: its token serves while it lasts)."""
        async with self.store.locked(cookie) as (locked, write):
            now = time.time()
            if locked is None or locked.access_expires - now > REFRESH_MARGIN:
                return locked, False  # another request refreshed it meanwhile
            if locked.refresh is None or (locked.refresh_expires is not None
                                          and locked.refresh_expires <= now):
                alive = locked.access_expires > now
                return (locked if alive else None), not alive
            try:
                tokens = await self.provider.refresh(locked.refresh)
                who = await self._who(tokens, locked.signed_in.expires)
            except (ProviderRefused, SignInFailed) as e:
                logger.info("a session of %s ended: its refresh was refused (%s)",
                            locked.signed_in.username, e)
                return None, True
            except httpx.HTTPError as e:
                logger.warning("the identity provider did not answer a refresh: %s", e)
                return (locked if locked.access_expires > now else None), False
            await write(who, tokens)
            return Stored(signed_in=who, access=tokens.access,
                          access_expires=tokens.access_expires, refresh=tokens.refresh,
                          refresh_expires=tokens.refresh_expires), False

    async def close(self, cookie: str) -> None:
        await self.store.close(cookie)
