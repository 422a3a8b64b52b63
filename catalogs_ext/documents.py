"""STAC Catalog documents of the tree, built for the request's base URL."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

STAC_VERSION = "1.0.0"
JSON = "application/json"
GEOJSON = "application/geo+json"


@dataclass(frozen=True)
class DataPaths:
    """Where the data API serves collections and items, relative to its root, and what
    its item search conforms to (a catalog's `_search` takes the same): handed in by the
    composition root, which owns those facts."""

    collection: Callable[[str], str]
    item: Callable[[str, str], str]
    search_conforms_to: Sequence[str] = ()


#: What the root conforms to: STAC API core (it is a catalog of the API).
STAC_CORE = "https://api.stacspec.org/v1.0.0/core"


def catalog_url(api_root: str, path: str | None) -> str:
    return f"{api_root}catalogs" + (f"/{quote(path, safe='/')}" if path else "")


def _child(api_root: str, path: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """A sub-catalog's link: its title, and who reads it where that is not anyone
    (`visibility`, and `project` beside it, as on the catalog itself)."""
    link = {"rel": "child", "type": JSON, "href": catalog_url(api_root, path)}
    if row.get("title"):
        link["title"] = row["title"]
    if row.get("visibility", "public") != "public":
        link["visibility"] = row["visibility"]
        if row.get("project") is not None:
            link["project"] = row["project"]
    return link


def root_document(api_root: str, top_level: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`GET /catalogs`: the root of the tree, one `child` link per top-level catalog."""
    return {
        "type": "Catalog", "stac_version": STAC_VERSION, "id": "catalogs",
        "title": "Catalogs", "description": "Root of the catalogs tree.",
        # a STAC API's catalog, as its catalogs are (STAC clients warned of none); no
        # search of its own: each catalog under it has one
        "conformsTo": [STAC_CORE],
        "links": [
            {"rel": "self", "type": JSON, "href": catalog_url(api_root, None)},
            {"rel": "root", "type": JSON, "href": catalog_url(api_root, None)},
            {"rel": "parent", "type": JSON, "href": api_root, "title": "STAC API"},
            *(_child(api_root, row["id"], row) for row in top_level),
        ],
    }


def catalog_document(api_root: str, row: Mapping[str, Any], paths: DataPaths
                     ) -> dict[str, Any]:
    """One catalog: its fields, and links to its parent, sub-catalogs, collections, items."""
    path: str = row["path"]
    parent = path.rsplit("/", 1)[0] if "/" in path else None
    links: list[dict[str, Any]] = [
        {"rel": "self", "type": JSON, "href": catalog_url(api_root, path)},
        {"rel": "root", "type": JSON, "href": catalog_url(api_root, None), "title": "Catalogs"},
        {"rel": "parent", "type": JSON, "href": catalog_url(api_root, parent)},
        {"rel": "search", "type": GEOJSON, "method": "GET", "title": "Items of this subtree",
         "href": f"{catalog_url(api_root, path)}/_search"},
        {"rel": "search", "type": GEOJSON, "method": "POST", "title": "Items of this subtree",
         "href": f"{catalog_url(api_root, path)}/_search"},
    ]
    links += [_child(api_root, f"{path}/{c['id']}", c) for c in row["children"]]
    for target in row["links"]:
        if target["item"] is None:
            link = {"rel": "child", "type": JSON,
                    "href": api_root + paths.collection(target["collection"])}
        else:
            link = {"rel": "item", "type": GEOJSON,
                    "href": api_root + paths.item(target["collection"], target["item"])}
        if target.get("title"):
            link["title"] = target["title"]
        links.append(link)
    links += list(row["extra_links"])
    document = {**row["extra"], "type": "Catalog", "stac_version": STAC_VERSION,
                "id": row["id"], "description": row["description"]}
    if row["title"]:
        document["title"] = row["title"]
    if paths.search_conforms_to:  # ours relative (`spec/...`): against this API's root
        document["conformsTo"] = [c if "://" in c else api_root + c
                                  for c in paths.search_conforms_to]
    document["owner"] = row["owner"]
    if row["project"] is not None:
        document["project"] = row["project"]
    if row.get("visibility", "public") != "public":
        document["visibility"] = row["visibility"]
    document.update(created=_iso(row["created"]), updated=_iso(row["updated"]), links=links)
    return document


def _iso(value: Any) -> str:
    return value.isoformat().replace("+00:00", "Z") if hasattr(value, "isoformat") else value
