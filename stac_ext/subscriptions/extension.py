"""The subscriptions as a stac-fastapi ApiExtension, registered under the data API's
prefix."""

from __future__ import annotations

import attr
from fastapi import FastAPI
from stac_fastapi.types.extension import ApiExtension

from stac_ext.subscriptions.routes import SubscriptionsConfig, subscriptions_router

#: Its key in stock's `extra_map` (`ENABLED_EXTENSIONS`).
SUBSCRIPTIONS = "subscriptions"
#: Relative: the data API serves it, and writes it against its own address
CONFORMANCE = "spec/subscriptions/v1.0"
SPEC = ("/subscriptions saves a search (its criteria, or a catalog's subtree) of a signed-in "
        "user: each item created, updated or deleted that it matches and she may read "
        "becomes a CloudEvents 1.0 event of her feed (/subscriptions/{id}/events, paged by "
        "a cursor) and, with a webhook, is POSTed there signed (Standard Webhooks), at "
        "least once and in order; a standing job runs a process on each window of new "
        "items, as her. /subscriptions/asyncapi describes the channels (AsyncAPI 3.0).")


@attr.s
class SubscriptionsExtension(ApiExtension):
    """`/subscriptions`: a user's subscriptions, their feeds, logs and runs."""

    config: SubscriptionsConfig = attr.ib()
    conformance_classes: list[str] = attr.ib(factory=lambda: [CONFORMANCE])
    schema_href: str | None = attr.ib(default=None)

    def register(self, app: FastAPI) -> None:
        prefix = f"{app.state.router_prefix}/subscriptions"
        app.include_router(subscriptions_router(prefix, self.config))
