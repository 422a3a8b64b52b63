"""JSON request bodies, bounded before the handlers see them: JSON by their `Content-Type`,
an object, of finite numbers and Unicode strings, nested at most MAX_JSON_DEPTH levels
(and for job inputs, integers within 64 bits). One dependency for every route that takes a
body, in both APIs (each shapes the 4xx as its errors)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fastapi import HTTPException, Request

#: Deeper bodies are refused: nothing in STAC or a process's inputs nests this far, and the
#: JSON encoders that serve what is stored stop at 255 levels.
MAX_JSON_DEPTH = 64


#: The integers every encoder downstream writes (orjson: 64 bits).
_INTEGERS = range(-(2**63), 2**63)


class _Unwritable(ValueError):
    """A number the body holds that could not be kept as it was sent."""


#: A body nested beyond what the parser follows.
_TOO_DEEP = object()


def _non_finite(constant: str) -> float:
    raise _Unwritable(f"{constant} is not a JSON number: numbers must be finite")


def _finite(text: str) -> float:
    """A float, unless it overflows to infinity (`1e400`: it was kept as null)."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Unwritable(f"{text} is beyond what a number may be: numbers must be finite "
                          "(at most about 1.8e308)")
    return value


def _integer(text: str) -> int:
    """An integer within 64 bits (a larger one failed as a job was stored: a 500)."""
    if len(text) > 20 or int(text) not in _INTEGERS:
        shown = text if len(text) <= 40 else f"{text[:20]}…"
        raise _Unwritable(f"{shown} is beyond what an integer may be: integers must be "
                          f"within 64 bits ({_INTEGERS.start} to {_INTEGERS.stop - 1})")
    return int(text)


_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
#: A `\uD800`-`\uDFFF` escape: half of a pair, or a lone surrogate (no Unicode text).
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_BRACKETS = re.compile(rb"[\[\]{}]")


def too_deep(raw: bytes) -> bool:
    """Whether the JSON text `raw` nests deeper than MAX_JSON_DEPTH, read as text (brackets
    outside strings), before any parser sees it: a parser recurses, and how deep it gets
    before failing depends on what is on the stack already."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH:
        return False
    level = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub(b'""', raw)):
        level += 1 if bracket in (b"[", b"{") else -1
        if level > MAX_JSON_DEPTH:
            return True
    return False


def depth(value: Any) -> int:
    """How deep arrays and objects nest in `value`, without recursion (counting stops a
    level beyond MAX_JSON_DEPTH)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node \
            if isinstance(node, list) else ()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            if depth > MAX_JSON_DEPTH:
                return depth
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _json_media_type(content_type: str) -> bool:
    """Whether `Content-Type` names JSON: `application/json` or `application/*+json`
    (parameters aside), as FastAPI reads a body as JSON."""
    kind = content_type.partition(";")[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/")
                                          and kind.endswith("+json"))


def _unicode(value: Any) -> bool:
    """Whether every string of `value` is Unicode text (its surrogates paired): UTF-8 takes
    nothing else (orjson would also refuse integers beyond 64 bits, which are JSON)."""
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return False
    return True


async def json_object_body(request: Request) -> None:
    """The body is a JSON object of finite numbers, nested at most MAX_JSON_DEPTH deep:
    say so (400) before a model's validators (which assume a dict and would fail with a
    500), a merge patch, a JSON Schema or the database see anything else. Its integers
    may be any (the database keeps them)."""
    await _checked(request, int)


async def json_object_body_64(request: Request) -> None:
    """`json_object_body`, its integers within 64 bits: what orjson, which writes job
    records, writes."""
    await _checked(request, _integer)


async def _checked(request: Request, integer: Callable[[str], int]) -> None:
    raw = await request.body()
    if not raw:
        return  # no body: the route's own validation says what is missing
    if not _json_media_type(request.headers.get("content-type", "")):
        # FastAPI hands a model the bytes of any other body: its validators failed (500)
        raise HTTPException(status_code=415, detail=(
            "The request body must be JSON, sent with `Content-Type: application/json`."))
    try:
        body = json.loads(raw, parse_constant=_non_finite, parse_float=_finite,
                          parse_int=integer)
    except _Unwritable as e:
        raise HTTPException(status_code=400, detail=str(e)) from None
    except ValueError:
        return  # malformed JSON: FastAPI's own validation answers it (400)
    except RecursionError:  # nested beyond what the parser follows
        body = _TOO_DEEP
    # a JSON Patch (RFC 6902) is a list of operations; every other body is an object
    shape = dict | list if request.method == "PATCH" else dict
    if not isinstance(body, shape) and body is not _TOO_DEEP:  # `null` too
        raise HTTPException(status_code=400, detail="The request body must be a JSON object.")
    # fewer brackets than the limit cannot nest deeper than it (a single item: no walk)
    if body is _TOO_DEEP or (raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH
                             and depth(body) > MAX_JSON_DEPTH):
        raise HTTPException(status_code=400, detail=f"The request body nests deeper than "
                            f"{MAX_JSON_DEPTH} levels.")
    # JSON may escape what is no Unicode text, which no encoder downstream takes
    if _SURROGATE.search(raw) is not None and not _unicode(body):
        raise HTTPException(status_code=400, detail=(
            "The request body's strings must be Unicode text (a lone surrogate, \\ud800 to "
            "\\udfff, is none)."))
