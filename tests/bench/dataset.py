"""The seeded synthetic data set: 3 collections of polygon items with four assets each."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

COLLECTIONS = ("bench-sentinel", "bench-landsat", "bench-modis")
WRITES = "bench-writes"  # POST item lands here, so the read scenarios see the same data
START = datetime(2018, 1, 1, tzinfo=UTC)
SPAN_DAYS = 6 * 365
OWNERS = [f"user{n}" for n in range(200)]
ASSETS = {
    "zarr": ("data.zarr", "application/vnd+zarr"),
    "netcdf": ("data.nc", "application/netcdf"),
    "parquet": ("table.parquet", "application/vnd.apache.parquet"),
    "csv": ("table.csv", "text/csv"),
}


def collection(collection_id: str) -> dict[str, Any]:
    return {
        "type": "Collection",
        "stac_version": "1.0.0",
        "id": collection_id,
        "description": f"Synthetic benchmark collection {collection_id}",
        "license": "CC-BY-4.0",
        "extent": {
            "spatial": {"bbox": [[-180, -80, 180, 80]]},
            "temporal": {"interval": [[START.isoformat(), None]]},
        },
        "links": [],
    }


def item(rng: random.Random, collection_id: str, n: int) -> dict[str, Any]:
    lon = rng.uniform(-175, 170)
    lat = rng.uniform(-75, 70)
    width, height = rng.uniform(0.5, 5), rng.uniform(0.5, 5)
    when = START + timedelta(seconds=rng.randrange(SPAN_DAYS * 86400))
    item_id = f"{collection_id}-{n:06d}"
    href = f"s3://bench-data/{collection_id}/{item_id}"
    ring = [[lon, lat], [lon + width, lat], [lon + width, lat + height], [lon, lat + height],
            [lon, lat]]
    return {
        "type": "Feature",
        "stac_version": "1.0.0",
        "stac_extensions": [],
        "id": item_id,
        "collection": collection_id,
        "geometry": {"type": "Polygon", "coordinates": [ring]},
        "bbox": [lon, lat, lon + width, lat + height],
        "properties": {
            "datetime": when.isoformat().replace("+00:00", "Z"),
            "owner": rng.choice(OWNERS),
            "created": when.isoformat().replace("+00:00", "Z"),
            "platform": rng.choice(["alpha", "beta", "gamma"]),
            "cloud_cover": round(rng.uniform(0, 100), 2),
        },
        "assets": {
            key: {"href": f"{href}/{name}", "type": media, "roles": ["data"],
                  "title": f"{key} of {item_id}"}
            for key, (name, media) in ASSETS.items()
        },
        "links": [],
    }


def items(total: int, seed: int = 7) -> Iterator[dict[str, Any]]:
    """`total` items spread evenly over COLLECTIONS; the same for the same seed."""
    rng = random.Random(seed)
    for n in range(total):
        yield item(rng, COLLECTIONS[n % len(COLLECTIONS)], n)
