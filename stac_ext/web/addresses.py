"""The catalog resource a page of ours shows, from the page's address (what a person pastes
from the browser's bar into a job's input): STAC Browser's `/browser/<path>` shows the data
API's `<data>/<path>`; our search page `/ui/search?<criteria>` the data API's search for
those criteria, as the page reads them."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from stac_ext.web.pages.search import api_criteria, typed_criteria


def api_address(url: str, service_url: str, data_prefix: str) -> str | None:
    """The data API's address of what the page at `url` shows (this service at
    `service_url`), or None: not a page of ours that shows a catalog resource."""
    root = service_url.rstrip("/")
    if not url.startswith(f"{root}/"):
        return None
    parts = urlsplit(url[len(root):])
    data = f"{root}/{data_prefix.strip('/')}"
    if parts.path.startswith("/browser/") and not parts.path.startswith("/browser/external/"):
        shown = parts.path.removeprefix("/browser/").strip("/")
        # its query is the page's own state (language, tabs), not the resource's
        return f"{data}/{shown}" if shown and shown != "search" else None
    if parts.path == "/ui/search":
        return f"{data}/search?{urlencode(api_criteria(typed_criteria(parts.query)))}"
    return None
