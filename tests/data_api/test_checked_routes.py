"""Routes that run their request checks themselves (`CheckedRoute`), and the ones among them
whose only inputs are their path's text, called with the path's values instead of through
FastAPI's solving: they answer what FastAPI's handling would."""

from __future__ import annotations

import re
from typing import Annotated, Any

import httpx
import pytest
from fastapi import FastAPI, HTTPException, Path, Request
from starlette.responses import JSONResponse

from stac_ext.data_api.request_checks import CheckedRoute, _path_text_only

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit


async def _refuse_x(request: Request) -> None:
    if request.query_params.get("x") == "refused":
        raise HTTPException(403, "checked and refused")


async def _both(request: Request, a: str, b: str) -> JSONResponse:
    return JSONResponse({"a": a, "b": b})


async def _bounded(request: Request, a: Annotated[str, Path(max_length=3)]) -> JSONResponse:
    return JSONResponse({"a": a})


async def _with_query(request: Request, a: str, n: int) -> JSONResponse:
    return JSONResponse({"a": a, "n": n})


async def _a_dict(request: Request, a: str) -> dict[str, Any]:
    return {"a": a}


def _app(checked: bool) -> FastAPI:
    app = FastAPI()
    for path, endpoint in [("/both/{a}/{b}", _both), ("/bounded/{a}", _bounded),
                           ("/query/{a}", _with_query), ("/dict/{a}", _a_dict)]:
        # (a dict's annotation would make a response model: none, so it is answered as is)
        app.router.add_api_route(path, endpoint, route_class_override=CheckedRoute,
                                 response_model=None)
    for route in app.router.routes:
        if isinstance(route, CheckedRoute) and checked:
            route.checks = _refuse_x
    return app


def test_only_a_route_of_path_text_is_called_directly() -> None:
    routes = {r.path: r for r in _app(True).router.routes if isinstance(r, CheckedRoute)}
    assert {path: _path_text_only(route) for path, route in routes.items()} == {
        "/both/{a}/{b}": True, "/bounded/{a}": False, "/query/{a}": False, "/dict/{a}": True}


@pytest.mark.parametrize("path", ["/both/x/y", "/both/a%20b/c%2Fd", "/both/%C3%A9/..%2F",
                                  "/both/%C3%A9/..", "/bounded/abc", "/bounded/abcd",
                                  "/query/a?n=2", "/query/a?n=two", "/query/a"])
async def test_answers_as_fastapi_would(path: str) -> None:
    plain = FastAPI()
    plain.add_api_route("/both/{a}/{b}", _both)
    plain.add_api_route("/bounded/{a}", _bounded)
    plain.add_api_route("/query/{a}", _with_query)
    answers = []
    for app in (_app(False), plain):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://test") as client:
            response = await client.get(path)
            answers.append((response.status_code, response.text))
    assert answers[0] == answers[1]


async def test_checks_run_first_and_a_dict_is_refused() -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=_app(True)),
                                 base_url="http://test") as client:
        refused = await client.get("/both/x/y?x=refused")
        assert (refused.status_code, refused.json()) == (403, {"detail": "checked and refused"})
        answered = await client.get("/both/x/y?x=other")
        assert (answered.status_code, answered.json()) == (200, {"a": "x", "b": "y"})
        with pytest.raises(TypeError, match=re.escape(
                "/dict/{a} answered dict: an endpoint called with its path's values answers "
                "a Response")):
            await client.get("/dict/x")


async def test_a_mount_s_parameters_are_not_the_route_s() -> None:
    outer = FastAPI()
    outer.mount("/tenant/{tenant}", _app(False))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=outer),
                                 base_url="http://test") as client:
        response = await client.get("/tenant/t1/both/x/y")
    assert (response.status_code, response.json()) == (200, {"a": "x", "b": "y"})
