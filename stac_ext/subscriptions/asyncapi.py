"""The AsyncAPI 3.0 document of the subscriptions: OGC API Publish-Subscribe's way of
describing what a subscriber receives, where and how (her webhook, her feed), each message
a CloudEvents 1.0 event."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from stac_ext.subscriptions.cloudevents import KINDS, MEDIA_TYPE, TYPE

ASYNCAPI_MEDIA_TYPE = "application/asyncapi+json"
#: The signature headers (Standard Webhooks').
SIGNATURE_HEADERS = {
    "type": "object", "required": ["webhook-id", "webhook-timestamp", "webhook-signature"],
    "properties": {
        "webhook-id": {"type": "string", "description": "The event's id (`id`)."},
        "webhook-timestamp": {"type": "string", "description": "Unix seconds of the "
                              "sending: refuse one far from now (a replay)."},
        "webhook-signature": {"type": "string", "description": "`v1,` then the base64 "
                              "HMAC-SHA256, with the subscription's secret (the bytes "
                              "after `whsec_`, base64-decoded), of `{webhook-id}."
                              "{webhook-timestamp}.{body}` (Standard Webhooks)."}}}


def _event_schema(root: str) -> dict[str, Any]:
    link = {"type": "object", "required": ["rel", "href"],
            "properties": {"rel": {"type": "string"}, "href": {"type": "string",
                                                               "format": "uri"},
                           "type": {"type": "string"}}}
    return {
        "type": "object",
        "required": ["specversion", "id", "source", "type", "subject", "time", "data"],
        "properties": {
            "specversion": {"const": "1.0"},
            "id": {"type": "string", "format": "uuid",
                   "description": "The same on every copy: a receiver drops the copies."},
            "source": {"type": "string", "format": "uri",
                       "description": f"The subscription: {root}subscriptions/{{id}}."},
            "type": {"enum": [TYPE + kind for kind in KINDS]},
            "subject": {"type": "string", "description": "collections/{c}/items/{i}"},
            "time": {"type": "string", "format": "date-time",
                     "description": "When the item was written."},
            "sequence": {"type": "string", "description": "The event's number in its "
                         "subscription (the feed's cursor): in order per subscription."},
            "datacontenttype": {"const": "application/json"},
            "data": {"type": "object", "required": ["kind", "collection", "id", "links"],
                     "properties": {"kind": {"enum": list(KINDS)},
                                    "collection": {"type": "string"},
                                    "id": {"type": "string"},
                                    "links": {"type": "array", "items": link}}}}}


def asyncapi(root: str) -> dict[str, Any]:
    """The document, for the data API at `root` (ending in `/`)."""
    url = urlsplit(root)
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "geocatalog subscriptions", "version": "1.0.0",
            "description": "Items created, updated and deleted that a saved search matches "
                           "and its owner may read, as CloudEvents 1.0 (JSON): POSTed to "
                           "her webhook, signed, in order, at least once (an event's `id` "
                           "is the same on each copy), and kept in her feed. Subscriptions "
                           f"are made and changed with {root}subscriptions (OpenAPI: "
                           f"{root}api)."},
        "defaultContentType": MEDIA_TYPE,
        "servers": {
            "service": {"host": url.netloc, "protocol": url.scheme,
                        "pathname": url.path.rstrip("/") or "/",
                        "description": "The feed: GET, with a bearer token of the "
                                       "subscription's owner."},
            "receiver": {"host": "{host}", "protocol": "https",
                         "description": "A subscriber's receiver (her `webhook`).",
                         "variables": {"host": {"description": "Her webhook's host."}}}},
        "channels": {
            "webhook": {
                "address": "{webhook}",
                "description": "Her webhook: each event POSTed as the body, one at a time, "
                               "in order; any 2xx answer acknowledges it, another is "
                               "retried, later and later, until the subscription is "
                               "paused.",
                "servers": [{"$ref": "#/servers/receiver"}],
                "parameters": {"webhook": {"description": "The subscription's webhook "
                                                          "URL."}},
                "messages": {"itemEvent": {"$ref": "#/components/messages/itemEvent"}},
                "bindings": {"http": {"bindingVersion": "0.3.0"}}},
            "feed": {
                "address": "/subscriptions/{subscriptionId}/events",
                "description": "Her feed: `?after={sequence}` answers the events since "
                               "then, `{\"events\": [...], \"cursor\", \"links\"}`; "
                               "`next` pages on.",
                "servers": [{"$ref": "#/servers/service"}],
                "parameters": {"subscriptionId": {"description": "The subscription's "
                                                                 "id."}},
                "messages": {"itemEvent": {"$ref": "#/components/messages/itemEvent"}}}},
        "operations": {
            "sendItemEvent": {
                "action": "send", "channel": {"$ref": "#/channels/webhook"},
                "summary": "An item event POSTed to a subscriber's webhook, signed.",
                "messages": [{"$ref": "#/channels/webhook/messages/itemEvent"}],
                "bindings": {"http": {"method": "POST", "bindingVersion": "0.3.0"}}},
            "keepItemEvent": {
                "action": "send", "channel": {"$ref": "#/channels/feed"},
                "summary": "An item event kept in a subscriber's feed.",
                "messages": [{"$ref": "#/channels/feed/messages/itemEvent"}]}},
        "components": {
            "messages": {"itemEvent": {
                "name": "itemEvent", "title": "An item created, updated or deleted",
                "contentType": MEDIA_TYPE,
                "headers": SIGNATURE_HEADERS,
                "payload": _event_schema(root)}}},
    }
