"""Zarr and NetCDF opened lazily with xarray, each byte read spent from a request's budget
(a NetCDF only when it references no other file), and kept open a moment between requests
(`Grids`: a time slider's next map reads its chunk, not the metadata again)."""

from __future__ import annotations

import threading
import time
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from stac_ext.content.formats import Format
from stac_ext.explorer.bounds import BLOCK, BoundedFile, BoundedStore, Budget, Relay
from stac_ext.explorer.problems import ExploreError
from stac_ext.publish.outside_refs import OutsideReference, check_self_contained

#: Datasets kept open between requests, and for how long (a file changed meanwhile shows
#: at the latest then).
KEPT_DATASETS, KEPT_SECONDS = 8, 60.0

#: The asynchronous twin of each asynchronous-capable filesystem the explorer reads Zarr
#: from (zarr reads chunks concurrently through it, in its own event loop).
_TWINS: dict[int, tuple[Any, Any]] = {}  # by id: the filesystem (kept: its id stays its)
_TWINS_LOCK = threading.Lock()


def _zarr_store(fs: Any, path: str) -> Any:
    """A Zarr store over `fs`: through its asynchronous twin (its own options, the outbound
    policy's socket factory included) when it has one, else through its mapper."""
    from zarr.storage import FsspecStore

    if not getattr(fs, "async_impl", False):
        return FsspecStore.from_mapper(fs.get_mapper(path), read_only=True)
    with _TWINS_LOCK:
        if id(fs) not in _TWINS:
            _TWINS[id(fs)] = (fs, type(fs)(**{**fs.storage_options, "asynchronous": True,
                                              "skip_instance_cache": True}))
        twin = _TWINS[id(fs)][1]
    return FsspecStore(twin, path=path, read_only=True)


def _open(fs: Any, path: str, fmt: Format, spending: Relay) -> tuple[Any, Callable[[], None]]:
    """The dataset, lazily, each byte its reads take spent through `spending`; and how it
    is closed."""
    import xarray as xr

    if fmt is Format.zarr:
        store = BoundedStore(_zarr_store(fs, path), spending)
        try:  # most stores: Zarr 2, consolidated (one read of metadata, no probing)
            dataset = xr.open_zarr(store, chunks=None, zarr_format=2, consolidated=True)
        except (FileNotFoundError, KeyError, ValueError, TypeError):
            with warnings.catch_warnings():  # xarray's advice to consolidate: the owner's
                warnings.simplefilter("ignore", RuntimeWarning)
                dataset = xr.open_zarr(store, chunks=None)
        return dataset, dataset.close
    raw = BoundedFile(fs.open(path, "rb", block_size=BLOCK), spending)
    try:
        try:  # nothing that would make HDF5 open other files (their paths are the server's)
            kind = check_self_contained(raw)  # type: ignore[arg-type]  # a binary file
        except OutsideReference as e:
            raise ExploreError(422, f"The file is not read: {e}.") from None
        dataset = xr.open_dataset(raw, engine="h5netcdf" if kind == "hdf5" else "scipy")
    except BaseException:
        raw.close()
        raise

    def close() -> None:
        dataset.close()
        raw.close()

    return dataset, close


@dataclass
class _Kept:
    dataset: Any
    relay: Relay
    close: Callable[[], None]
    until: float


class Grids:
    """Datasets kept open a moment between requests, by where they are read from (a time
    slider's next map reads its chunk, not the store's metadata and coordinates again).
    A request takes its dataset while it reads (another request at once opens one of its
    own), its reads spending that request's budget."""

    def __init__(self, kept: int = KEPT_DATASETS, seconds: float = KEPT_SECONDS) -> None:
        self.kept, self.seconds = kept, seconds
        self._entries: OrderedDict[tuple[Any, ...], _Kept] = OrderedDict()
        self._lock = threading.Lock()
        # closed before the interpreter goes, at the latest: HDF5's own exit handler would
        # close a NetCDF still open on a Python file after Python is gone (a crash)
        weakref.finalize(self, _close_all, self._entries, self._lock)

    @contextmanager
    def use(self, fs: Any, path: str, fmt: Format, budget: Budget) -> Iterator[Any]:
        key = (id(fs), path, fmt)
        with self._lock:
            entry = self._entries.pop(key, None)
        if entry is not None and entry.until < time.monotonic():
            entry.close()
            entry = None
        if entry is None:
            relay = Relay(budget)
            dataset, close = _open(fs, path, fmt, relay)
            entry = _Kept(dataset, relay, close, time.monotonic() + self.seconds)
        entry.relay.current = budget
        try:
            yield entry.dataset
        except BaseException:
            entry.close()
            raise
        entry.relay.current = None
        with self._lock:
            gone = [self._entries.pop(key)] if key in self._entries else []
            self._entries[key] = entry
            while len(self._entries) > self.kept:
                gone.append(self._entries.popitem(last=False)[1])
        for each in gone:
            each.close()

    def close(self) -> None:
        """Close every dataset kept."""
        _close_all(self._entries, self._lock)


def _close_all(entries: OrderedDict[tuple[Any, ...], _Kept], lock: threading.Lock) -> None:
    with lock:
        gone = list(entries.values())
        entries.clear()
    for each in gone:
        each.close()
