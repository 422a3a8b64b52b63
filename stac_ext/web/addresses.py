"""The catalog resource a page of ours shows, from the page's address (what a person pastes
from the browser's bar into a job's input): STAC Browser's `/browser/<path>` shows the data
API's `<data>/<path>`; our search page `/ui/search?<criteria>` the data API's search for
those criteria, as the page reads them (its Variables field's words as the variables'
ids, its times as periods)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from stac_ext.web.pages.search import VARIABLES_SHOWN, api_criteria, typed_criteria, with_ids


async def api_address(url: str, service_url: str, read: Callable[[str], Awaitable[Any]],
                      data_prefix: str) -> str | None:
    """The data API's address of what the page at `url` shows (this service at
    `service_url`; `read`: the data API read as the caller), or None: not a page of ours
    that shows a catalog resource."""
    root = service_url.rstrip("/")
    if not url.startswith(f"{root}/"):
        return None
    parts = urlsplit(url[len(root):])
    data = f"/{data_prefix.strip('/')}"
    if parts.path.startswith("/browser/") and not parts.path.startswith("/browser/external/"):
        shown = parts.path.removeprefix("/browser/").strip("/")
        # its query is the page's own state (language, tabs), not the resource's
        return f"{root}{data}/{shown}" if shown and shown != "search" else None
    if parts.path == "/ui/search":
        typed = typed_criteria(parts.query)
        if any(name == "collections" for name, _ in typed):
            found = await read(f"{data}/collections?limit={VARIABLES_SHOWN}") or {}
            typed, _ = with_ids(typed, [
                {"id": str(c.get("id")), "words": str(c.get("title") or "")}
                for c in found.get("collections", []) if isinstance(c, dict)])
        return f"{root}{data}/search?{urlencode(api_criteria(typed))}"
    return None
