"""STAC documents for tests: the minimal item, a collection, unique ids, and the
`conformance-checks` collection the external validators query."""

from __future__ import annotations

import uuid


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


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
