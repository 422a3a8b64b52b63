"""A long read ends when its client leaves: the query is cancelled, in the database too.

The HTTP server does not stop a request whose client has closed its connection; a search
would hold its database connection until its query ends (or `DB_STATEMENT_TIMEOUT`), and
clients that give up and retry pile such queries up until every connection of the pool is
taken and the service answers 503 to everyone. `unless_client_leaves` runs a read in the
request's task and, once it has run WATCH_AFTER seconds, waits beside it for the client's
disconnect; the disconnect cancels the read (asyncpg then cancels the statement in
PostgreSQL and the connection goes back to its pool) and raises `ClientGone`, answered
499 to nobody and counted in the metrics.

For reads that may take long (searches, pages, aggregations), and only once they have
run for WATCH_AFTER seconds; a single item's read is not watched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.types import Receive

T = TypeVar("T")
#: Reads shorter than this are not watched: a watch is a task of its own, which a short
#: read would pay for in CPU, and queries pile up only from long reads.
WATCH_AFTER = 0.25


class ClientGone(Exception):
    """The client closed its connection before its answer was ready."""

    def __init__(self) -> None:
        super().__init__("The client closed the connection before the answer was ready.")


async def _disconnect(receive: Receive) -> None:
    """Returns once the client has gone. A server waits to answer `receive` once the body
    has been read, until the client leaves; one that answers with a body again will not
    tell (an in-process caller's): then this waits until cancelled, never spinning."""
    ended = False
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        if ended:
            await asyncio.Future()  # never done: cancelled with the read's end
        ended = not message.get("more_body", False)


async def unless_client_leaves(request: Request, read: Coroutine[Any, Any, T]) -> T:
    """What `read` returns; `ClientGone` (and `read` cancelled) if the client leaves first.
    `read` runs in the request's own task; a read still running after WATCH_AFTER seconds
    is watched from then on."""
    current = asyncio.current_task()
    assert current is not None
    loop = asyncio.get_running_loop()
    watching: asyncio.Task[None] | None = None
    running, left = True, False

    def on_gone(task: asyncio.Task[None]) -> None:
        nonlocal left
        if running and not task.cancelled() and task.exception() is None:
            left = True
            current.cancel()

    def watch() -> None:
        nonlocal watching
        watching = loop.create_task(_disconnect(request.receive))
        watching.add_done_callback(on_gone)

    timer = loop.call_later(WATCH_AFTER, watch)
    try:
        return await read
    except asyncio.CancelledError:
        if left and current.uncancel() == 0:
            raise ClientGone() from None
        raise
    finally:
        running = False
        timer.cancel()
        if watching is not None:
            watching.cancel()
