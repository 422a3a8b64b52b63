"""A long read ends when its client leaves: the query is cancelled, in the database too.

The HTTP server does not stop a request whose client has closed its connection; a search
would hold its database connection until its query ends (or `DB_STATEMENT_TIMEOUT`), and
clients that give up and retry pile such queries up until every connection of the pool is
taken and the service answers 503 to everyone. `unless_client_leaves` runs a read beside
a wait for the client's disconnect; the disconnect cancels the read (asyncpg then cancels
the statement in PostgreSQL and the connection goes back to its pool) and raises
`ClientGone`, answered 499 to nobody and counted in the metrics.

For reads that may take long (searches, pages, aggregations): two tasks a call, too dear
for a single item's read.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.types import Receive

T = TypeVar("T")


class ClientGone(Exception):
    """The client closed its connection before its answer was ready."""

    def __init__(self) -> None:
        super().__init__("The client closed the connection before the answer was ready.")


async def _disconnect(receive: Receive) -> None:
    """Returns once the client has gone (what is left of a body read, then nothing)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def unless_client_leaves(request: Request, read: Coroutine[Any, Any, T]) -> T:
    """What `read` returns; `ClientGone` (and `read` cancelled) if the client leaves first."""
    work = asyncio.ensure_future(read)
    gone = asyncio.ensure_future(_disconnect(request.receive))
    try:
        await asyncio.wait((work, gone), return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not work.done():  # the client left, or this request was cancelled itself
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
    if work.cancelled():
        raise ClientGone()
    return work.result()
