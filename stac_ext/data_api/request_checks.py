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
from starlette.convertors import StringConvertor
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
    the request; what they raise is answered as a dependency's would be.

    A route whose only inputs are its path's text (a single item's: no query, header,
    cookie, body or dependency, no constraint on the text) and whose endpoint answers a
    `Response` calls its endpoint with the path's values: FastAPI would validate text as
    text, at a sixth of the request's CPU."""

    checks: RequestCheck | None = None

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        endpoint = self.endpoint
        if not _path_text_only(self):
            async def checked(request: Request) -> Response:
                if self.checks is not None:
                    await self.checks(request)
                return await handler(request)

            return checked

        names = tuple(self.param_convertors)  # (a mount's own parameters are not the route's)

        async def called(request: Request) -> Response:
            if self.checks is not None:
                await self.checks(request)
            values = request.path_params
            answer = await endpoint(request, **{name: values[name] for name in names})
            if not isinstance(answer, Response):
                raise TypeError(f"{self.path} answered {type(answer).__name__}: an endpoint "
                                "called with its path's values answers a Response")
            return answer

        return called


def _path_text_only(route: APIRoute) -> bool:
    """Whether the route's endpoint takes the request and its path's parameters as plain
    text, nothing else, and answers as it is: FastAPI's solving would then hand it
    `request.path_params` unchanged."""
    dependant = route.dependant
    params = dependant.path_params
    return (dependant.request_param_name == "request" and not dependant.query_params
            and not dependant.header_params and not dependant.cookie_params
            and not dependant.body_params and not dependant.dependencies
            and dependant.response_param_name is None
            and dependant.background_tasks_param_name is None
            and route.response_model is None and route.status_code is None
            and all(p.field_info.annotation is str and not p.field_info.metadata
                    and p.alias == p.name for p in params)
            and {p.name for p in params} == set(route.param_convertors)
            and all(isinstance(c, StringConvertor) for c in route.param_convertors.values()))
