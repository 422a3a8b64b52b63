"""One item as pgstac stores it, read and hydrated in the API. The one SQL read of an item
by its key is `geocatalog.stored_item` (`queries.STORED_ITEM`), the reader's visibility its
parameter: the single item's GET renders its text (`read_client`), a write and an example
read it hydrated here (`read_item`). Decoding and hydration are every item read's, search
pages' too."""

from __future__ import annotations

from typing import Any

import orjson
from asyncpg import Connection
from hydraters import hydrate
from pypgstac.hydration import DO_NOT_MERGE_MARKER, hydrate_py

from stac_ext.data_api import queries
from stac_ext.data_api.policy import reader_text


def decoded(text: str) -> tuple[Any, bool]:
    """An item's JSON text from pgstac, decoded, and whether its do-not-merge marker is in
    it (then it hydrates through stock's hydrater, which strips the markers left
    unmatched)."""
    return orjson.loads(text), DO_NOT_MERGE_MARKER in text


def hydrated(item: dict[str, Any], strip_markers: bool, markers: bool) -> dict[str, Any]:
    """The item merged with its collection's base item, which pgstac (0.10, as our
    migrations install) sends with every item (its own copy). `strip_markers`: unmatched
    do-not-merge markers are dropped (stock's `EXCLUDE_HYDRATE_MARKERS`).

    pypgstac's Python merge walks the base item's keys only (a few), where the Rust
    hydrater stock uses converts the whole item to Rust and back, a large part of a page's
    CPU (docs/performance.md). The two merge alike (the Rust one raises on a list over
    another type, where the Python one keeps the item's value); where pgstac's do-not-merge
    markers may be left to strip (`markers`), stock's hydrater does it."""
    base = item.pop("pgstac:base_item", None) or {}
    base = {k: v for k, v in base.items() if v is not None}
    if markers:
        return hydrate(base, item, strip_unmatched_markers=strip_markers)
    return hydrate_py(base, item)


async def read_item(conn: Connection, collection_id: str, item_id: str,
                    reader: dict[str, Any] | None) -> dict[str, Any] | None:
    """The item hydrated, as pgstac's own hydration gives it, if `reader` may read it; else
    None, as for a missing one."""
    text = await conn.fetchval(queries.STORED_ITEM, collection_id, item_id,
                               reader_text(reader))
    if text is None:
        return None
    item, markers = decoded(text)
    return hydrated(item, strip_markers=True, markers=markers)
