"""An item event as the subscriber is told it: a CloudEvents 1.0 event in JSON (structured
mode), naming the item, never carrying its body."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from stac_ext.data_api.urls import collection_path, item_path

#: The message's media type (structured mode); a list of them: the batch format's.
MEDIA_TYPE = "application/cloudevents+json"
#: `type`, with the event's kind (created, updated, deleted) after it.
TYPE = "org.geocatalog.item."
KINDS = ("created", "updated", "deleted")


def _time(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def event_id(subscription: str, number: int) -> str:
    """An event's id: made of its subscription and number, the same on every copy."""
    return str(uuid.uuid5(uuid.UUID(subscription), str(number)))


def item_event(row: Mapping[str, Any], api_root: str, subscription: str) -> dict[str, Any]:
    """The event of `row` (a subscription's event: number, kind, collection, item_id,
    happened), with links under `api_root` (the data API's root, ending in `/`)."""
    item = f"{api_root}{item_path(row['collection'], row['item_id'])}"
    return {
        "specversion": "1.0",
        "id": event_id(subscription, row["number"]),
        "source": f"{api_root}subscriptions/{subscription}",
        "type": TYPE + row["kind"],
        "subject": item_path(row["collection"], row["item_id"]),
        "time": _time(row["happened"]),
        # CloudEvents' `sequence` extension: the subscription's event number (the feed's
        # cursor), in order per subscription
        "sequence": str(row["number"]),
        "datacontenttype": "application/json",
        "data": {
            "kind": row["kind"], "collection": row["collection"], "id": row["item_id"],
            "links": [
                {"rel": "self", "href": item, "type": "application/geo+json"},
                {"rel": "collection", "href": f"{api_root}{collection_path(row['collection'])}",
                 "type": "application/json"}]},
    }
