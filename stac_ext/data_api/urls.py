"""Where the data API serves a collection and an item: the one place their paths are built.

Paths are relative to the API root (`{base}/data/`, or `PREFIX_PATH`), so that each
caller joins them to the root it has: the request's, the configured `BASE_URL`'s, or a
job's service URL.
"""

from __future__ import annotations

import re
from urllib.parse import quote

#: What `quote(value, safe="")` leaves as it is: such ids skip it (most do, on every link).
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~\-]*")


def _segment(value: str, encode: bool) -> str:
    return quote(value, safe="") if encode and not _UNRESERVED.fullmatch(value) else value


def collection_path(collection_id: str, encode: bool = True) -> str:
    return f"collections/{_segment(collection_id, encode)}"


def item_path(collection_id: str, item_id: str, encode: bool = True) -> str:
    """`collections/{c}/items/{i}`, ids percent-encoded. `encode=False` keeps them raw, as
    stock stac-fastapi's item links do (`ItemLinker` reproduces those byte for byte)."""
    return f"{collection_path(collection_id, encode)}/items/{_segment(item_id, encode)}"


def api_root(service_url: str, prefix_path: str) -> str:
    """The data API's root under a service root (both ending in `/` when joined)."""
    return f"{service_url.rstrip('/')}/{prefix_path.strip('/')}/"
