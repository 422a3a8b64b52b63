"""The explorer's views of one source (`info`, and `map` and `series` of a Zarr or NetCDF,
`rows`, `chart` and `points` of a Parquet or CSV file), each read in a thread under the
request's budget, a few at a time per process; recent maps kept a moment for a time
slider moved back and forth (only ever answered after the request's own access check)."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from stac_ext.content.formats import Format
from stac_ext.explorer import gridded, tables
from stac_ext.explorer.bounds import Budget
from stac_ext.explorer.grids import Grids
from stac_ext.explorer.problems import ExploreError
from stac_ext.explorer.sources import Source, Storage, read_errors

T = TypeVar("T")
GRIDDED = (Format.zarr, Format.netcdf)
VIEWS = {Format.zarr: ("info", "map", "series"), Format.netcdf: ("info", "map", "series"),
         Format.parquet: ("info", "rows", "chart", "points"),
         Format.csv: ("info", "rows", "chart", "points")}
#: Maps kept, and for how long.
KEPT_MAPS, KEPT_SECONDS = 64, 120.0


@dataclass(frozen=True)
class Limits:
    read_bytes: int = 512 * 2**20
    seconds: float = 30.0
    renders: int = 2


@dataclass(frozen=True)
class Choice:
    """What a view is asked for (each view reads its own)."""

    variable: str | None = None
    time: int | None = None
    level: int | None = None
    x: float | None = None
    y: float | None = None
    offset: int = 0
    limit: int = 50
    columns: tuple[str, ...] = ()
    x_column: str | None = None
    y_column: str | None = None


@dataclass
class Explorer:
    storage: Storage
    limits: Limits = field(default_factory=Limits)
    _turns: asyncio.Semaphore | None = None
    grids: Grids = field(default_factory=Grids)
    _maps: OrderedDict[tuple[Any, ...], tuple[float, dict[str, Any]]] = field(
        default_factory=OrderedDict)

    def close(self) -> None:
        """Close the datasets kept open (at the service's end)."""
        self.grids.close()

    def budget(self) -> Budget:
        return Budget(self.limits.read_bytes, self.limits.seconds)

    async def run(self, work: Callable[[Budget], T]) -> T:
        """`work` in a thread, with a budget of its own, when a turn is free; 504 when it
        outlasts the time bound (its next read then stops it)."""
        if self._turns is None:
            self._turns = asyncio.Semaphore(self.limits.renders)
        budget = self.budget()
        async with self._turns:
            try:
                return await asyncio.wait_for(asyncio.to_thread(work, budget),
                                              self.limits.seconds + 1)
            except TimeoutError:
                raise ExploreError(504, f"Reading the data took longer than "
                                   f"{self.limits.seconds:g} s (EXPLORER_SECONDS).") from None

    async def view(self, source: Source, view: str, choice: Choice) -> dict[str, Any]:
        if view not in VIEWS[source.format]:
            raise ExploreError(404, f"A {source.format.value} file has no {view!r} view: it "
                               f"has {', '.join(VIEWS[source.format])}.")
        if view == "map":
            key = (source, choice.variable, choice.time, choice.level)
            if (kept := self._maps.get(key)) is not None and kept[0] > time.monotonic():
                return kept[1]
        found = await self.run(lambda budget: self._read(source, view, choice, budget))
        if view == "map":
            self._maps[key] = (time.monotonic() + KEPT_SECONDS, found)
            while len(self._maps) > KEPT_MAPS:
                self._maps.popitem(last=False)
        return found

    def _read(self, source: Source, view: str, choice: Choice, budget: Budget
              ) -> dict[str, Any]:
        with read_errors(source):
            fs, path = self.storage.filesystem(source)
            if source.format in GRIDDED:
                with self.grids.use(fs, path, source.format, budget) as ds:
                    if view == "info":
                        return gridded.describe(ds, source.format)
                    if view == "map":
                        return gridded.map_of(ds, choice.variable, choice.time,
                                              choice.level, budget)
                    if choice.x is None or choice.y is None:
                        raise ExploreError(400, "A time series needs a point: x and y.")
                    return gridded.series_at(ds, choice.variable, choice.x, choice.y,
                                             choice.level, budget)
            with tables.opened(fs, path, source.format, budget) as table:
                if view == "info":
                    return table.describe()
                if view == "rows":
                    return table.rows(choice.offset, choice.limit, list(choice.columns))
                if view == "chart":
                    return table.chart(choice.x_column, choice.y_column)
                return table.points(choice.y_column)

    def quicklook(self, source: Source, variable: str | None, title: str,
                  units: str | None, budget: Budget) -> bytes:
        """A quicklook's PNG (blocking: run it through `run`)."""
        with read_errors(source):
            fs, path = self.storage.filesystem(source)
            if source.format in GRIDDED:
                with self.grids.use(fs, path, source.format, budget) as ds:
                    return gridded.quicklook(ds, variable, title, budget)
            with tables.opened(fs, path, source.format, budget) as table:
                return table.quicklook(title, units)
