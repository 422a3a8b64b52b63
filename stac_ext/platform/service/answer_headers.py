"""Headers as ASGI carries them, read where a middleware sees every request (its scope's
list) and read and edited in an answer's `http.response.start` message, as the
middlewares' send wrappers do for every answer: in place, on the raw list, where
Starlette's `Headers` and `MutableHeaders` decode and re-encode the whole list
(docs/performance.md)."""

from __future__ import annotations

from starlette.types import Message

Headers = list[tuple[bytes, bytes]]


def raw(message: Message) -> Headers:
    """The message's headers as a list this module edits (ASGI allows any iterable)."""
    headers = message.get("headers")
    if not isinstance(headers, list):
        headers = message["headers"] = [tuple(pair) for pair in headers or ()]
    return headers


def value(headers: Headers, name: bytes) -> bytes | None:
    """The first value of header `name` (lower case), of a request's or an answer's."""
    for key, found in headers:
        if key == name:
            return found
    return None


def add_vary(headers: Headers, name: bytes) -> None:
    """`name` added to the answer's `Vary` (a cache keeps answers apart by it)."""
    for index, (key, found) in enumerate(headers):
        if key == b"vary":
            headers[index] = (key, found + b", " + name)
            return
    headers.append((b"vary", name))
