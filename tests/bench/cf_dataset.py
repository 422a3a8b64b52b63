"""The CF-scale data set: one collection per (synthetic) CF standard name, items spread over
them unevenly as real variables are (a few hold most items, most hold a few), seeded.

Written once as ndjson files (`write`), which `pypgstac load` and `geocatalog load` both
read, so both load the same bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

START = datetime(2000, 1, 1, tzinfo=UTC)
SPAN_DAYS = 25 * 365
OWNERS = [f"user{n}" for n in range(200)]
PLATFORMS = ["argo", "glider", "mooring", "satellite", "ship", "model"]
#: Items per ndjson file (geocatalog load reads a file whole before loading it).
FILE_ITEMS = 100_000


def collection_id(n: int) -> str:
    return f"climate_forecast-variable_{n:05d}"


def collection(n: int) -> dict[str, Any]:
    return {
        "type": "Collection", "stac_version": "1.0.0", "id": collection_id(n),
        "title": f"Variable {n}", "description": f"CF standard name number {n} (synthetic)",
        "license": "CC-BY-4.0", "links": [],
        "extent": {"spatial": {"bbox": [[-180, -90, 180, 90]]},
                   "temporal": {"interval": [[START.isoformat(), None]]}},
    }


def counts(collections: int, items: int, skew: float = 1.1, seed: int = 7) -> list[int]:
    """Items per collection: Zipf-like weights in a shuffled order, at least one each."""
    weights = [1 / (rank ** skew) for rank in range(1, collections + 1)]
    random.Random(seed).shuffle(weights)
    total = sum(weights)
    shares = [max(1, int(items * w / total)) for w in weights]
    shares[shares.index(max(shares))] += items - sum(shares)  # the rest to the largest
    return shares


def item(rng: random.Random, collection_n: int, n: int) -> dict[str, Any]:
    lon, lat = rng.uniform(-175, 170), rng.uniform(-80, 75)
    width, height = rng.uniform(0.5, 5), rng.uniform(0.5, 5)
    when = START + timedelta(seconds=rng.randrange(SPAN_DAYS * 86400))
    cid = collection_id(collection_n)
    item_id = f"{cid.removeprefix('climate_forecast-')}-{n:07d}"
    stamp = when.isoformat().replace("+00:00", "Z")
    ring = [[lon, lat], [lon + width, lat], [lon + width, lat + height], [lon, lat + height],
            [lon, lat]]
    return {
        "type": "Feature", "stac_version": "1.0.0", "stac_extensions": [], "id": item_id,
        "collection": cid, "geometry": {"type": "Polygon", "coordinates": [ring]},
        "bbox": [lon, lat, lon + width, lat + height],
        "properties": {"datetime": stamp, "owner": rng.choice(OWNERS), "created": stamp,
                       "platform": rng.choice(PLATFORMS), "title": f"{cid} at {stamp[:10]}"},
        "assets": {"data": {"href": f"s3://cf-data/{cid}/{item_id}.nc", "roles": ["data"],
                            "type": "application/netcdf", "title": "NetCDF"}},
        "links": [],
    }


def items(collections: int, total: int, seed: int = 11) -> Iterator[dict[str, Any]]:
    """Every item, collection by collection."""
    rng = random.Random(seed)
    n = 0
    for c, count in enumerate(counts(collections, total)):
        for _ in range(count):
            yield item(rng, c, n)
            n += 1


def write(folder: Path, collections: int, total: int) -> list[Path]:
    """`collections.ndjson` and the items in ndjson files of FILE_ITEMS (made once: kept
    while the shape is the same); the item files, in order."""
    stamp = folder / f".written-{collections}-{total}"
    files = sorted(folder.glob("items-*.ndjson"))
    if stamp.exists():
        return files
    folder.mkdir(parents=True, exist_ok=True)
    for old in [*files, *folder.glob(".written-*")]:
        old.unlink()
    (folder / "collections.ndjson").write_text(
        "".join(json.dumps(collection(n)) + "\n" for n in range(collections)))
    files, out = [], None
    for written, doc in enumerate(items(collections, total)):
        if written % FILE_ITEMS == 0:
            if out:
                out.close()
            files.append(folder / f"items-{written // FILE_ITEMS:03d}.ndjson")
            out = files[-1].open("w")
        assert out is not None
        out.write(json.dumps(doc) + "\n")
    if out:
        out.close()
    stamp.touch()
    return files
