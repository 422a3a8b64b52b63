"""The data API read as a given caller, from inside the service: the files a job's input
references (an item, a collection with a query, a search) give, resolved through the same
routes, SQL and visibility rules a client's request meets (`process_api.data.file_inputs`).

The request goes to the service's own ASGI app, in this process, with the caller's reader
set in its scope (`READER_KEY`, which the read dependency takes in place of a token): no
client can set an ASGI scope key, so none can read as another user this way.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

from stac_ext.platform.access import Caller

#: The ASGI scope key of a request the service makes as a caller: their reader.
READER_KEY = "geocatalog.reader"
#: Items asked for per page of a search.
PAGE = 500
#: Assets not read by default (an item's pictures and descriptions, not its data).
NOT_DATA = {"thumbnail", "overview", "metadata", "visual"}


class _AsReader:
    def __init__(self, app: ASGIApp, reader: dict[str, Any] | None) -> None:
        self.app = app
        self.reader = reader

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app({**scope, READER_KEY: self.reader}, receive, send)


def _assets(item: dict[str, Any], wanted: list[str] | None) -> list[tuple[str, dict]]:
    assets = item.get("assets") or {}
    if wanted:
        missing = [key for key in wanted if key not in assets]
        if missing:
            raise ValueError(f"item {item.get('id')} has no asset {', '.join(missing)}")
        return [(key, assets[key]) for key in wanted]
    data = [(k, a) for k, a in assets.items() if "data" in (a.get("roles") or [])]
    return data or [(k, a) for k, a in assets.items()
                    if not NOT_DATA & set(a.get("roles") or [])]


#: The data API's address of what a page of the service shows, from (the page's URL, the
#: service's URL, a reader of the data API as the caller: path -> its JSON, or None).
Pages = Callable[[str, str, Callable[[str], Awaitable[Any]]], Awaitable[str | None]]


class CallerReads:
    """`process_api.data.file_inputs.Catalog` over the service's own app (`app`, set once the
    composition root has built it), whose data API is at `prefix`."""

    def __init__(self, prefix: str, pages: Pages | None = None) -> None:
        self.prefix = prefix.rstrip("/")
        # the data API's address of what a page of the service shows (a reference pasted
        # from the browser's bar); None: not such a page
        self.pages = pages
        self.app: ASGIApp | None = None
        self._item = re.compile(rf"^{re.escape(self.prefix)}/collections/([^/]+)/items/([^/]+)$")
        self._collection = re.compile(rf"^{re.escape(self.prefix)}/collections/([^/]+)$")
        self._pages = re.compile(
            rf"^{re.escape(self.prefix)}(/search|/collections/[^/]+/items)$")

    async def read(self, path: str, caller: Any, service_url: str) -> Any:
        """What the data API answers at `path` (under its prefix) as `caller` reads it
        (None: not a 200)."""
        assert self.app is not None  # set by the composition root before any request
        async with self._as(caller, service_url.rstrip("/")) as client:
            return await _read(client, f"{self.prefix}/{path.lstrip('/')}")

    def _as(self, caller: Any, root: str) -> httpx.AsyncClient:
        """A client of the service's own app, reading as `caller` (a right of the process
        API is no right of the data API's: their own and their projects' items)."""
        assert self.app is not None
        reader = None if caller is None else \
            Caller(caller.username, frozenset(caller.groups)).reader
        return httpx.AsyncClient(transport=httpx.ASGITransport(
            app=_AsReader(self.app, reader)), base_url=root)

    async def files(self, reference: Mapping[str, Any], caller: Any, service_url: str,
                    limit: int) -> list[dict[str, Any]] | None:
        href = str(reference.get("collection") or reference.get("href"))
        root = service_url.rstrip("/")
        if self.app is None or not href.startswith(f"{root}/"):
            return None
        async with self._as(caller, root) as client:
            if self.pages is not None:
                href = await self.pages(href, root, partial(_read, client)) or href
            if not href.startswith(f"{root}{self.prefix}/"):
                return None
            path = urlsplit(href).path[len(urlsplit(root).path):]
            items = await self._items(client, reference, href, path, limit)
        wanted = reference.get("assets")
        files = []
        for item in items:
            url = f"{root}{self.prefix}/collections/{item.get('collection')}/items/{item['id']}"
            properties = item.get("properties") or {}
            readers = {"visibility": properties.get("visibility") or "public",
                       **({"project": properties["project"]} if properties.get("project")
                          else {})}
            # an asset's relative href is relative to its item's own address
            base = next((str(link.get("href")) for link in item.get("links") or []
                         if link.get("rel") == "self"), url)
            for key, asset in _assets(item, wanted):
                files.append({"item": url, "asset": key,
                              "href": urljoin(base, str(asset.get("href"))),
                              **({"type": asset["type"]} if asset.get("type") else {}),
                              **readers})
                if len(files) > limit:
                    return files
        return files

    async def _items(self, client: httpx.AsyncClient, reference: Mapping[str, Any],
                     href: str, path: str, limit: int) -> list[dict[str, Any]]:
        if (found := self._item.match(path)) and "collection" not in reference:
            return [_answer(await client.get(href))]
        if found := self._collection.match(path):
            _answer(await client.get(f"{self.prefix}/collections/{found.group(1)}"))
            body = {"collections": [found.group(1)], "limit": min(PAGE, limit + 1),
                    **{k: reference[k] for k in ("bbox", "datetime", "filter", "filter-lang")
                       if k in reference}}
            if reference.get("q"):
                body["q"] = [reference["q"]]
            if isinstance(body.get("filter"), str):  # CQL2 text: what GET /search reads
                body |= {"filter-lang": "cql2-text", "collections": found.group(1),
                         "q": reference.get("q")}
                if "bbox" in body:
                    body["bbox"] = ",".join(map(str, body["bbox"]))
                page = _answer(await client.get(f"{self.prefix}/search", params={
                    k: v for k, v in body.items() if v is not None}))
            else:
                page = _answer(await client.post(f"{self.prefix}/search", json=body))
        elif self._pages.match(path) and "collection" not in reference:
            page = _answer(await client.get(href))
        else:
            raise ValueError("not an item, a collection or a search of this catalog")
        items = list(page.get("features") or [])
        while len(items) <= limit:
            following = next((link for link in page.get("links") or []
                              if link.get("rel") == "next"), None)
            if following is None:
                break
            if following.get("method") == "POST":
                page = _answer(await client.post(following["href"], json=following.get("body")))
            else:
                page = _answer(await client.get(following["href"]))
            items += page.get("features") or []
        return items


async def _read(client: httpx.AsyncClient, path: str) -> Any:
    """What the data API answers at `path` as the caller reads it (None: not a 200)."""
    response = await client.get(path)
    return response.json() if response.status_code == 200 else None


def _answer(response: httpx.Response) -> dict[str, Any]:
    """The page or item; LookupError (404) or ValueError (400) with the API's words."""
    body = response.json() if response.content else {}
    detail = str(body.get("description") or body.get("detail") or body.get("title") or
                 f"the catalog answered {response.status_code}")
    if response.status_code == 404:
        raise LookupError(detail)
    if response.status_code >= 400:
        raise ValueError(detail)
    return dict(body)
