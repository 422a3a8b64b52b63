"""What a route checks of a request before its endpoint runs (its caller, bounded JSON
bodies, unknown query parameters, `datetime`): each route's checks run as one.

Stock's routes and the extensions' take them as a dependency (stock's hook,
`add_route_dependencies`). The routes whose endpoints are ours (`stock.py`: an item, an
items page, GET /search, the reads every client makes) run them themselves
(`CheckedRoute`), before FastAPI's handling: as a dependency, FastAPI would solve one more
dependant for every request (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from fastapi import Request
from fastapi.routing import APIRoute
from starlette.responses import Response

#: A check of a request (raises to refuse it)
RequestCheck = Callable[[Request], Awaitable[None]]


def all_of(checks: Sequence[RequestCheck]) -> RequestCheck:
    """One check running `checks` in turn (the first to refuse answers)."""
    if len(checks) == 1:
        return checks[0]

    async def check(request: Request) -> None:
        for each in checks:
            await each(request)

    return check


class CheckedRoute(APIRoute):
    """A route that runs its `checks` (set once its API is built) before FastAPI handles
    the request; what they raise is answered as a dependency's would be."""

    checks: RequestCheck | None = None

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            if self.checks is not None:
                await self.checks(request)
            return await handler(request)

        return checked
