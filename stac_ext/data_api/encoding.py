"""JSON out of the data API (responses, database arguments): orjson, which is fast but
stops at 64-bit integers; what a client may send beyond is written out as raw numbers."""

from __future__ import annotations

from typing import Any

import orjson

_SMALLEST, _LARGEST = -(2**63), 2**64 - 1


def json_bytes(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # an integer beyond 64 bits
        return orjson.dumps(_wide_as_fragments(value))


def _wide_as_fragments(value: Any) -> Any:
    """`value` with each integer beyond 64 bits as a fragment of its digits (the
    standard library's encoder would not take the fragments of kept items)."""
    if isinstance(value, int) and not _SMALLEST <= value <= _LARGEST:
        return orjson.Fragment(str(value))
    if isinstance(value, dict):
        return {key: _wide_as_fragments(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_wide_as_fragments(item) for item in value]
    return value
