"""STAC documents for tests: the minimal item, a collection, unique ids, random JSON
trees (bases and items to merge or strip), and the `conformance-checks` collection the
external validators query."""

from __future__ import annotations

import random
import uuid
from typing import Any


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


TREE_KEYS = ["a", "b", "c", "type", "assets", "roles", "href"]


def _tree_value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return rng.choice(["x", "y", "", "é"])
    if kind == 1:
        return rng.choice([0, 1, -2.5, 10**12])
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return []
    if kind in (4, 5):
        return {k: _tree_value(rng, depth + 1)
                for k in rng.sample(TREE_KEYS, rng.randrange(4))}
    return [_tree_value(rng, depth + 1) for _ in range(rng.randrange(3))]


def random_tree(rng: random.Random) -> dict[str, Any]:
    """A JSON object of nested objects, lists (empty, equal or not) and scalars (nulls too)."""
    return {k: _tree_value(rng, 1) for k in rng.sample(TREE_KEYS, rng.randrange(1, 6))}


def make_collection(collection_id: str) -> dict:
    return {
        "type": "Collection", "stac_version": "1.0.0", "id": collection_id,
        "description": f"test collection {collection_id}", "license": "CC-BY-4.0",
        "extent": {"spatial": {"bbox": [[-180, -90, 180, 90]]},
                   "temporal": {"interval": [["2020-01-01T00:00:00Z", None]]}},
        "links": [],
    }


def make_item(item_id: str, collection_id: str | None = None, x: float = 0.0,
              day: int = 1, **assets: str) -> dict:
    """The minimal item: no links, no bbox."""
    item = {
        "id": item_id, "type": "Feature",
        "properties": {"datetime": f"2021-01-{day:02d}T00:00:00Z"},
        "geometry": {"type": "Polygon",
                     "coordinates": [[[x, 0], [x + 1, 0], [x + 1, 1], [x, 1], [x, 0]]]},
        "assets": {name: {"href": href, "title": name, "roles": ["data"]}
                   for name, href in (assets or {"data": "https://example.org/a.tif"}).items()},
        "stac_extensions": [],
    }
    if collection_id:
        item["collection"] = collection_id
    return item


#: The demo data's sea surface temperature collection (`publish.demo_files`).
SST = "climate_forecast-sea_surface_temperature"

CHECKS_COLLECTION = "conformance-checks"


def checks_collection() -> list[dict]:
    """A collection for validators that need numeric and text properties to query: 12
    items, `quality` 1..12, `station` names, one-letter `grade`s, NetCDF assets (so
    generated content shows)."""
    docs: list[dict] = [make_collection(CHECKS_COLLECTION)]
    for n in range(1, 13):
        item = make_item(f"check-{n:02d}", collection_id=CHECKS_COLLECTION, x=float(n),
                         day=n, data=f"s3://checks/{n}.nc")
        item["assets"]["data"]["type"] = "application/netcdf"
        item["properties"].update(quality=n, station=f"station-{n:02d}-north",
                                  grade=chr(ord("A") + n - 1), owner="demo")
        item.update(stac_version="1.0.0", bbox=[n, 0, n + 1, 1], links=[])
        docs.append(item)
    return docs
