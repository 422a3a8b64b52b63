"""The rules every item write follows, whoever writes (API, bulk API, publishing process).

`prepare_item` validates an item for a collection and sets what the server owns:
`properties.owner`, `created`, `updated`, and `collection`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from stac_ext.models import ItemIn


class ItemRuleError(ValueError):
    """The item breaks a rule; the message says which (an HTTP 400 in the API)."""


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stamp(item: dict[str, Any], owner: str, created: str | None = None) -> dict[str, Any]:
    """Server-set properties: the owner, creation and update times."""
    now = utc_now()
    properties = item.setdefault("properties", {})
    properties["owner"] = owner
    properties["created"] = created or now
    properties["updated"] = now
    return item


def check_item(item: dict[str, Any], collection_id: str, invalid_id_chars: Sequence[str],
               expected_id: str | None = None) -> None:
    item_id = str(item.get("id", ""))
    if invalid_id_chars and re.search("[" + re.escape("".join(invalid_id_chars)) + "]", item_id):
        raise ItemRuleError(f"Item id {item_id!r} may not contain any of "
                            f"{' '.join(invalid_id_chars)}")
    if item.get("geometry") is None:
        raise ItemRuleError(f"Item {item_id!r} has no geometry (required).")
    if item.get("collection") not in (None, collection_id):
        raise ItemRuleError(f"Item {item_id!r} names the collection {item['collection']!r}, "
                            f"but it is written to {collection_id!r}: an item belongs to "
                            "exactly one collection.")
    if expected_id is not None and expected_id != item_id:
        raise ItemRuleError(f"Item id in the body ({item_id}) differs from the path "
                            f"({expected_id}).")


def prepare_item(item: dict[str, Any] | ItemIn, collection_id: str, owner: str,
                 invalid_id_chars: Sequence[str], created: str | None = None,
                 expected_id: str | None = None) -> dict[str, Any]:
    """A validated, stamped copy of `item`, ready for pgstac."""
    try:
        model = item if isinstance(item, ItemIn) else ItemIn.model_validate(item)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ItemRuleError(f"Invalid item: {where}: {first.get('msg')}") from e
    body: dict[str, Any] = model.model_dump(mode="json")
    check_item(body, collection_id, invalid_id_chars, expected_id)
    body["collection"] = collection_id
    return stamp(body, owner, created)
