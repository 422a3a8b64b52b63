"""Quicklooks: an item's picture (a NetCDF or Zarr variable's map with its colour bar and
units; a table's points or chart), drawn from the asset `content.quicklook` picks, stored
in the results store beside the jobs' files (`thumbnails/...`) and served by the API only
to whoever may read the item.

A stored picture's name carries what it was drawn from (the asset's address and the item's
`updated`: a changed item gets a new one) and its audience: `all` when anyone who reads
the item may read its data, else the reader it was drawn for (a job's file the process API
lets only some read)."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import Any

from stac_ext.content.formats import asset_format
from stac_ext.content.quicklook import drawn_asset
from stac_ext.data_api.urls import quote_all
from stac_ext.explorer.bounds import Budget
from stac_ext.explorer.problems import ExploreError
from stac_ext.explorer.service import Explorer
from stac_ext.explorer.sources import Source

#: Where quicklooks are kept in the results store.
FOLDER = "thumbnails"
#: Everyone who reads the item (the audience of most quicklooks).
EVERYONE = "all"


def audience_of(reader: str) -> str:
    """A reader (as the SQL takes it, JSON text) as a stored picture's audience."""
    return hashlib.sha256(reader.encode()).hexdigest()[:16]


def _said(item: dict[str, Any]) -> tuple[str | None, str | None]:
    """The item's variable and its units (`cube:variables`, `cf:parameter`)."""
    properties = item.get("properties") or {}
    cube = properties.get("cube:variables")
    if isinstance(cube, dict) and cube:
        name, described = next(iter(cube.items()))
        units = described.get("unit") if isinstance(described, dict) else None
        return str(name), str(units) if units else None
    parameters = properties.get("cf:parameter")
    if isinstance(parameters, list) and parameters and isinstance(parameters[0], dict):
        units = parameters[0].get("unit")
        return None, str(units) if units else None
    return None, None


@dataclass(frozen=True)
class Quicklooks:
    explorer: Explorer

    def key(self, collection_id: str, item: dict[str, Any], href: str, audience: str) -> str:
        properties = item.get("properties") or {}
        drawn_from = f"{href}\n{properties.get('updated') or properties.get('datetime')}"
        version = hashlib.sha256(drawn_from.encode()).hexdigest()[:16]
        return (f"{FOLDER}/{quote_all(collection_id)}/{quote_all(str(item.get('id')))}/"
                f"{version}-{audience}.png")

    def asset(self, item: dict[str, Any]) -> dict[str, Any]:
        """The asset drawn from; 404 when the item has none."""
        found = drawn_asset(item)
        if found is None:
            raise ExploreError(404, f"Item {item.get('id')} has no data to draw a quicklook "
                               "of (a Zarr, NetCDF, Parquet or CSV asset).")
        return found[1]

    def source(self, item: dict[str, Any]) -> Source:
        """The asset drawn from, read with the service's own access."""
        asset = self.asset(item)
        fmt = asset_format(asset)
        assert fmt is not None  # `drawn_asset` takes only formats the explorer reads
        return Source(str(asset["href"]), fmt)

    def _stored(self, key: str) -> bytes | None:
        fs, root = self.explorer.storage.results()
        path = f"{root.rstrip('/')}/{key}"
        try:
            return bytes(fs.cat_file(path))
        except FileNotFoundError:
            return None

    def _store(self, key: str, png: bytes) -> None:
        fs, root = self.explorer.storage.results()
        path = f"{root.rstrip('/')}/{key}"
        if getattr(fs, "local_file", False):
            fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        fs.pipe_file(path, png)

    def draw(self, item: dict[str, Any], source: Source, budget: Budget) -> bytes:
        """The item's picture (blocking)."""
        variable, units = _said(item)
        title = str((item.get("properties") or {}).get("title") or item.get("id"))[:80]
        return self.explorer.quicklook(source, variable, title, units, budget)

    async def png(self, collection_id: str, item: dict[str, Any], source: Source,
                  audience: str) -> bytes:
        """The stored picture, else drawn (a turn of the explorer's) and stored."""
        key = self.key(collection_id, item, source.href, audience)
        stored = await asyncio.to_thread(self._stored, key)
        if stored is not None:
            return stored
        png = await self.explorer.run(lambda budget: self.draw(item, source, budget))
        await asyncio.to_thread(self._store, key, png)
        return png

    def make(self, collection_id: str, item: dict[str, Any]) -> str:
        """Draw and store an item's picture for everyone who reads it (blocking: `geocatalog
        thumbnails`); its key. Its data is read with the service's own access."""
        source = self.source(item)
        key = self.key(collection_id, item, source.href, EVERYONE)
        if self._stored(key) is None:
            self._store(key, self.draw(item, source, self.explorer.budget()))
        return key
