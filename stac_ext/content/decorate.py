"""Adds generated links and extension URIs to items on their way out of the API."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from stac_ext.content.extensions import schema_uris, used_prefixes
from stac_ext.content.formats import Format, asset_format
from stac_ext.data_api.urls import item_path

NOTEBOOK_TYPE = "application/x-ipynb+json"
EXAMPLE_FORMATS = {Format.netcdf, Format.zarr}
EXPLORER_FORMATS = {Format.zarr, Format.parquet, Format.csv}


@lru_cache(maxsize=8192)
def _encoded(href: str) -> str:
    """An href as a query value. Memoised: urllib's `quote` was 40 % of decorating a page,
    and the same assets are served again and again (a pure function: nothing goes stale)."""
    return quote(href, safe="")


def example_path(collection_id: str, item_id: str) -> str:
    """Where the generated Python example of an item is served, under the API root."""
    return f"{item_path(collection_id, item_id)}/example.py"


def has_python_example(links: list[dict[str, Any]]) -> bool:
    return any(link.get("rel") == "example" and link.get("example:language") == "Python"
               for link in links)


@dataclass(frozen=True)
class ItemDecorator:
    """SPEC generated content: stac_extensions, Python example, explorer, notebook links."""

    explorer_url_template: str
    notebook_url_template: str

    def decorate(self, item: dict[str, Any], base_url: str) -> dict[str, Any]:
        """Add generated content to `item` (in place) and return it."""
        links = item.get("links")
        if isinstance(links, list):
            links += self._links(item, links, base_url)
        if "stac_extensions" in item or "properties" in item:
            self._add_extension_uris(item)
        return item

    def _links(self, item: dict[str, Any], links: list[dict[str, Any]],
               base_url: str) -> list[dict[str, Any]]:
        example = False
        explorer: list[dict[str, Any]] = []
        assets = item.get("assets")
        for key, asset in (assets.items() if isinstance(assets, dict) else ()):
            fmt = asset_format(asset) if isinstance(asset, dict) else None
            if fmt is None:
                continue
            example = example or fmt in EXAMPLE_FORMATS
            if fmt in EXPLORER_FORMATS and asset.get("href"):
                explorer.append({
                    "rel": "explorer", "type": "text/html",
                    "title": f"Open '{asset.get('title') or key}' in the data explorer",
                    "href": self.explorer_url_template.format(
                        href=_encoded(str(asset["href"]))),
                })
        generated: list[dict[str, Any]] = []
        if (example and item.get("id") and item.get("collection")
                and not has_python_example(links)):
            generated.append({
                "rel": "example", "type": "text/x-python",
                "title": "Open the data with xarray (Python)",
                "href": base_url + example_path(item["collection"], item["id"]),
                "example:language": "Python", "example:container": False,
            })
        generated += explorer
        for link in links:
            if link.get("rel") == "example" and link.get("type") == NOTEBOOK_TYPE:
                generated.append({
                    "rel": "notebook", "type": "text/html",
                    "title": f"Run '{link.get('title') or 'the notebook'}' in the notebook service",
                    "href": self.notebook_url_template.format(
                        href=_encoded(str(link.get("href", "")))),
                })
        return generated

    @staticmethod
    def _add_extension_uris(item: dict[str, Any]) -> None:
        known = schema_uris()
        current = list(item.get("stac_extensions") or [])
        missing = [known[p] for p in sorted(used_prefixes(item))
                   if p in known and known[p] not in current]
        item["stac_extensions"] = current + missing
