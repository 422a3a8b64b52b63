"""Where the data API serves a collection and an item: the one place their paths are built,
and the API root a request is answered for.

Paths are relative to the API root (`{base}/data/`, or `PREFIX_PATH`), so that each
caller joins them to the root it has: the request's, the configured `BASE_URL`'s, or a
job's service URL.
"""

from __future__ import annotations

import re
import string
from typing import Any
from urllib.parse import quote

from stac_fastapi.types.requests import get_base_url
from starlette.requests import Request

from stac_ext.platform.service.answer_headers import value

#: What `quote(value, safe="")` leaves as it is (most ids, on every link).
_UNRESERVED_ASCII = string.ascii_letters + string.digits + "_.~-"
_UNRESERVED = re.compile(f"[{re.escape(_UNRESERVED_ASCII)}]*")
#: Most hrefs: nothing to encode but their `:` and `/` (`s3://bucket/key`, `https://...`).
_PATH_LIKE = re.compile(f"[{re.escape(_UNRESERVED_ASCII)}:/]*")
#: What `quote(c, safe="")` makes of each ASCII character.
_ASCII_QUOTED = {c: chr(c) if chr(c) in _UNRESERVED_ASCII else f"%{c:02X}"
                 for c in range(128)}


def quote_all(value: str) -> str:
    """`quote(value, safe="")`: every character but the unreserved ones percent-encoded
    (ids in paths, hrefs in query values). A value with nothing to encode is returned as
    it is, a path-like one has its two separators replaced, another ASCII one is
    translated: a fraction of `quote`'s time (a quarter of a translation), on every item."""
    if _UNRESERVED.fullmatch(value):
        return value
    if _PATH_LIKE.fullmatch(value):
        return value.replace(":", "%3A").replace("/", "%2F")
    return value.translate(_ASCII_QUOTED) if value.isascii() else quote(value, safe="")


def path_segment(value: str) -> str:
    """An id as one segment of a path: percent-encoded as `quote(value, safe="")` does, and
    an id of dots only (`.`, `..`) with its dots encoded too: as written, a client
    resolving the href would take it for a dot segment."""
    segment = quote_all(value)
    return segment.replace(".", "%2E") if segment and not segment.strip(".") else segment


def collection_path(collection_id: str) -> str:
    return f"collections/{path_segment(collection_id)}"


def item_path(collection_id: str, item_id: str) -> str:
    """`collections/{c}/items/{i}`, ids percent-encoded."""
    return f"{collection_path(collection_id)}/items/{path_segment(item_id)}"


def api_root(service_url: str, prefix_path: str) -> str:
    """The data API's root under a service root (both ending in `/` when joined)."""
    return f"{service_url.rstrip('/')}/{prefix_path.strip('/')}/"


#: API roots by what stock's `get_base_url` makes one of; at most `_ROOTS_KEPT` (the Host
#: header is the client's to choose).
_ROOTS: dict[tuple[Any, ...], str] = {}
_ROOTS_KEPT = 256


def request_root(request: Request) -> str:
    """The API root a request is answered for, as stock's `get_base_url` makes it (the
    scheme, the first Host header or else the server, the app's root path, the router's
    prefix), remembered by those: Starlette builds and parses a URL for it at each call
    (docs/performance.md)."""
    scope = request.scope
    server = scope.get("server")
    key = (scope.get("scheme", "http"), tuple(server) if server is not None else None,
           scope.get("app_root_path", scope.get("root_path", "")),
           value(scope["headers"], b"host"),
           request.app.state.router_prefix)
    found = _ROOTS.get(key)
    if found is None:
        if len(_ROOTS) >= _ROOTS_KEPT:
            _ROOTS.clear()
        found = _ROOTS[key] = get_base_url(request)
    return found
