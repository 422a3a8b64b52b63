"""asyncpg connections to a cluster's URL, every host tried at once.

asyncpg, as libpq, tries a URL's hosts one after the other, and spends its connect timeout
over all of them: a member that is down without refusing (a machine lost, its address
silent; a server frozen) would hold every new connection for the whole timeout, and the
hosts after it would never be tried. Here every host is tried at once and the first that is
what the URL asks (`target_session_attrs`) is taken, the others closed; `prefer-standby`
takes a standby if one answers, else a server that did.

Imports asyncpg and the standard library.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import asyncpg

from stac_ext.platform.database.connection_urls import per_host, target_of


async def connect(dsn: str, *args: Any, **kwargs: Any) -> asyncpg.Connection:
    """`asyncpg.connect` (the pools' `connect`), racing the hosts of a cluster's URL."""
    urls = per_host(dsn)
    if len(urls) < 2:
        return await asyncpg.connect(dsn, *args, **kwargs)
    target = target_of(dsn)
    # each host as it is; which one serves is decided here
    tries = [asyncio.ensure_future(asyncpg.connect(url, *args, **{
        **kwargs, "target_session_attrs": "any"})) for url in urls]
    pending: set[asyncio.Future[asyncpg.Connection]] = set(tries)
    fallback: asyncpg.Connection | None = None
    errors: list[BaseException] = []
    chosen: asyncpg.Connection | None = None
    try:
        while pending and chosen is None:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for attempt in done:
                if (error := attempt.exception()) is not None:
                    errors.append(error)
                    continue
                conn = attempt.result()
                verdict = await _serves(target, conn) if chosen is None else False
                if verdict:
                    chosen = conn
                elif verdict is None and fallback is None:
                    fallback = conn
                else:
                    conn.terminate()
    finally:
        for attempt in pending:  # too late: whatever it makes is closed
            attempt.cancel()
            attempt.add_done_callback(_terminated)
        if fallback is not None and chosen is not None:
            fallback.terminate()
    if chosen is not None or fallback is not None:
        return chosen or fallback
    raise next((e for e in errors if isinstance(e, OSError)), None) or (
        errors[0] if errors else asyncpg.exceptions.TargetServerAttributeNotMatched(
            f"none of the hosts is {target}"))


async def _serves(target: str, conn: asyncpg.Connection) -> bool | None:
    """Whether `conn` is what `target` asks: True, False, or None (only if no better)."""
    settings = conn.get_settings()
    status = getattr(settings, "in_hot_standby", None)  # reported from PostgreSQL 14
    standby = status == "on" if status is not None else bool(
        await conn.fetchval("SELECT pg_catalog.pg_is_in_recovery()"))
    read_only = standby or getattr(settings, "default_transaction_read_only", "off") == "on"
    verdicts: dict[str, bool | None] = {
        "read-write": not read_only, "read-only": read_only, "primary": not standby,
        "standby": standby, "prefer-standby": True if standby else None}
    return verdicts.get(target, True)


def _terminated(attempt: asyncio.Future[asyncpg.Connection]) -> None:
    if not attempt.cancelled() and attempt.exception() is None:
        with contextlib.suppress(Exception):
            attempt.result().terminate()
