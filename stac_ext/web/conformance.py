"""The `html` conformance classes the web face earns: every resource of OGC API Features
Core (landing, conformance, collections, collection, items, item) and of OGC API Processes
Core answers HTML to a browser (`negotiation.py`)."""

from __future__ import annotations

import attr
from fastapi import FastAPI
from stac_fastapi.types.extension import ApiExtension

FEATURES_HTML = "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/html"
PROCESSES_HTML = "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/html"


@attr.s
class HtmlConformance(ApiExtension):
    """Claims Features' `html` class in `/data/conformance`; the routes are the web face's."""

    conformance_classes: list[str] = attr.ib(factory=lambda: [FEATURES_HTML])
    schema_href: str | None = attr.ib(default=None)

    def register(self, app: FastAPI) -> None:
        return None
