"""Adds generated links and extension URIs to items on their way out of the API."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from stac_ext.content.extensions import schema_uris
from stac_ext.content.formats import Format, asset_format
from stac_ext.data_api.urls import item_path, quote_all

NOTEBOOK_TYPE = "application/x-ipynb+json"
EXAMPLE_FORMATS = {Format.netcdf, Format.zarr}
EXPLORER_FORMATS = {Format.zarr, Format.parquet, Format.csv}


def _filler(template: str) -> Callable[[str], str]:
    """`template.format(href=...)`; a concatenation when `{href}` is its only field (as in
    every template so far): `str.format` was a fifth of decorating an item."""
    head, field, tail = template.partition("{href}")
    if field and not any(brace in head + tail for brace in "{}"):
        return lambda href: head + href + tail
    return lambda href: template.format(href=href)


def example_path(collection_id: str, item_id: str) -> str:
    """Where the generated Python example of an item is served, under the API root."""
    return f"{item_path(collection_id, item_id)}/example.py"


@dataclass(frozen=True)
class ItemDecorator:
    """Generated content: stac_extensions, Python example, explorer, notebook links.

    It runs on every item of every page (100 per page), so each item is read in one pass
    over its assets and one over its links."""

    #: None: the platform has no explorer of its own (the service's explorer page, below,
    #: is the links' target) and no notebook service (no notebook link: a link to a
    #: placeholder host would be a dead end)
    explorer_url_template: str | None
    notebook_url_template: str | None
    #: The service's own explorer page, from the service root (`ui/explore`): the explorer
    #: links' target when no template names another; None: no explorer link without one
    explorer_page: str | None = None
    #: Where the data API is mounted: the service root is the API root without it
    data_prefix: str = "/data"

    @cached_property
    def _explorer_href(self) -> Callable[[str], str]:
        return _filler(self.explorer_url_template or "")

    @cached_property
    def _notebook_href(self) -> Callable[[str], str]:
        return _filler(self.notebook_url_template or "")

    @cached_property
    def _explores(self) -> bool:
        return bool(self.explorer_url_template or self.explorer_page)

    def _own_explorer_href(self, base_url: str, item: dict[str, Any], href: str) -> str:
        """The service's explorer page opening `href` as an asset of `item` (the page checks
        that the caller may read the item, as the API does)."""
        mount = self.data_prefix.strip("/") + "/"
        service = base_url[:-len(mount)] if mount != "/" and base_url.endswith(mount) \
            else base_url
        return (f"{service}{self.explorer_page}?collection="
                f"{quote_all(str(item.get('collection') or ''))}"
                f"&item={quote_all(str(item.get('id') or ''))}&source={quote_all(href)}")

    def decorate(self, item: dict[str, Any], base_url: str) -> dict[str, Any]:
        """Add generated content to `item` (in place) and return it. The prefixes of its
        `prefix:name` fields (properties, assets, links, generated links included: their
        extensions) are gathered in the same passes."""
        prefixes: set[str] = set()
        _add_prefixes(prefixes, item.get("properties"))
        links = item.get("links")
        generated = self._links(item, links if isinstance(links, list) else [], base_url,
                                prefixes)
        if isinstance(links, list) and generated:
            if generated[0]["rel"] == "example":  # the one generated with prefixed fields
                prefixes.add("example")
            links += generated
        if "stac_extensions" in item or "properties" in item:
            _add_extension_uris(item, prefixes)
        return item

    def _links(self, item: dict[str, Any], links: list[dict[str, Any]],
               base_url: str, prefixes: set[str]) -> list[dict[str, Any]]:
        example = False
        explorer: list[dict[str, Any]] = []
        assets = item.get("assets")
        for key, asset in (assets.items() if isinstance(assets, dict) else ()):
            _add_prefixes(prefixes, asset)
            fmt = asset_format(asset) if isinstance(asset, dict) else None
            if fmt is None:
                continue
            example = example or fmt in EXAMPLE_FORMATS
            if fmt in EXPLORER_FORMATS and asset.get("href") and self._explores:
                href = str(asset["href"])
                explorer.append({
                    "rel": "explorer", "type": "text/html",
                    "title": f"Open '{asset.get('title') or key}' in the data explorer",
                    "href": self._explorer_href(quote_all(href)) if self.explorer_url_template
                    else self._own_explorer_href(base_url, item, href),
                })
        notebooks: list[dict[str, Any]] = []
        for link in links:
            _add_prefixes(prefixes, link)
            if link.get("rel") != "example":
                continue
            if link.get("example:language") == "Python":
                example = False  # the item has its own
            if link.get("type") == NOTEBOOK_TYPE and self.notebook_url_template:
                notebooks.append({
                    "rel": "notebook", "type": "text/html",
                    "title": f"Run '{link.get('title') or 'the notebook'}' in the notebook service",
                    "href": self._notebook_href(quote_all(str(link.get("href", "")))),
                })
        generated: list[dict[str, Any]] = []
        if example and item.get("id") and item.get("collection"):
            generated.append({
                "rel": "example", "type": "text/x-python",
                "title": "Open the data with xarray (Python)",
                "href": base_url + example_path(item["collection"], item["id"]),
                "example:language": "Python", "example:container": False,
            })
        return generated + explorer + notebooks


def _add_prefixes(prefixes: set[str], fields: Any) -> None:
    if isinstance(fields, dict):
        for key in fields:
            if ":" in key:
                prefixes.add(key.partition(":")[0])


def _add_extension_uris(item: dict[str, Any], prefixes: set[str]) -> None:
    known = schema_uris()
    current = list(item.get("stac_extensions") or [])
    missing = [known[p] for p in sorted(prefixes) if p in known and known[p] not in current]
    item["stac_extensions"] = current + missing
