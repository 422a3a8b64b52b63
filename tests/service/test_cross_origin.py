"""Cross-origin answers are Starlette's, header for header: `CrossOrigin` answers a request
without `Origin` itself, as Starlette would, and hands every other to Starlette."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.middleware.cors import CORSMiddleware
from starlette.types import Message, Receive, Scope, Send

from stac_ext.platform.service.cross_origin import CrossOrigin

pytestmark = pytest.mark.unit

CONFIGS: list[dict[str, Any]] = [
    {"allow_origins": ["*"]},
    {"allow_origins": ["https://maps.example"], "allow_credentials": True,
     "allow_methods": ["GET", "POST"], "allow_headers": ["Authorization"], "max_age": 600},
    {"allow_origins": [], "allow_origin_regex": r"https://.*\.example"},
]
#: what the app behind sets itself: nothing, a Vary of its own
ANSWERS = [[(b"content-type", b"application/geo+json")],
           [(b"content-type", b"application/json"), (b"vary", b"Accept-Encoding")]]
REQUESTS = [("GET", []), ("POST", [(b"content-type", b"application/json")]),
            ("GET", [(b"origin", b"https://maps.example")]),
            ("GET", [(b"origin", b"https://elsewhere.org")]),
            ("OPTIONS", [(b"origin", b"https://maps.example"),
                         (b"access-control-request-method", b"POST")])]


def _answer(middleware: type[CORSMiddleware], config: dict[str, Any],
            answer: list[tuple[bytes, bytes]], method: str,
            headers: list[tuple[bytes, bytes]]) -> list[Message]:
    """What the client receives through `middleware` set up with `config`."""
    sent: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": list(answer)})
        await send({"type": "http.response.body", "body": b"{}"})

    async def receive() -> Message:
        return {"type": "http.request"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/data/search", "query_string": b"",
             "headers": [(b"host", b"geo.example.org"), *headers]}
    asyncio.run(middleware(app, **config)(scope, receive, send))
    return sent


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize(("method", "headers"), REQUESTS)
def test_every_answer_is_starlettes(config: dict[str, Any], answer: list[tuple[bytes, bytes]],
                                    method: str, headers: list[tuple[bytes, bytes]]) -> None:
    assert _answer(CrossOrigin, config, answer, method, headers) == \
        _answer(CORSMiddleware, config, answer, method, headers)


def test_an_answer_without_origin_varies_by_it() -> None:
    start = _answer(CrossOrigin, CONFIGS[0], ANSWERS[1], "GET", [])[0]
    assert start["headers"] == [(b"content-type", b"application/json"),
                                (b"vary", b"Accept-Encoding, Origin")]
