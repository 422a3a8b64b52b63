"""JSON out of the data API (responses, database arguments): orjson, which is fast but
stops at 64-bit integers, and the standard library for what a client may send beyond."""

from __future__ import annotations

import json
from typing import Any

import orjson


def json_bytes(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # an integer beyond 64 bits
        return json.dumps(value, separators=(",", ":")).encode()
