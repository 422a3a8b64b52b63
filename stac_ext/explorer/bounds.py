"""What one request may read of an asset, in bytes and time (`Budget`), held at every read
whatever the library reading: a file (`BoundedFile`: h5netcdf, pyarrow), a Zarr store
(`BoundedStore`), a filesystem DuckDB reads through (`BoundedFileSystem`)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from fsspec.spec import AbstractFileSystem
from zarr.abc.store import ByteRequest
from zarr.core.buffer import Buffer, BufferPrototype
from zarr.storage import WrapperStore

from stac_ext.explorer.problems import ExploreError, quantity

#: Bytes fetched at a time from remote storage (a NetCDF's header, a Zarr chunk's share,
#: a Parquet column chunk's).
BLOCK = 1 << 20


class Budget:
    """Bytes and seconds one request's reads may take; `spend` refuses past either."""

    def __init__(self, max_bytes: int, seconds: float) -> None:
        self.max_bytes = max_bytes
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.read = 0
        #: the first refusal, kept: a library that reads through us (DuckDB) may raise its
        #: own error in its place
        self.refused: ExploreError | None = None

    def _refuse(self, status: int, message: str) -> ExploreError:
        self.refused = self.refused or ExploreError(status, message)
        return self.refused

    def spend(self, size: int) -> None:
        self.read += size
        if self.read > self.max_bytes:
            raise self._refuse(413, f"This would read more than {quantity(self.max_bytes)} "
                               "of the data (EXPLORER_READ_BYTES): choose a smaller part.")
        self.in_time()

    def in_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise self._refuse(504, f"Reading the data took longer than {self.seconds:g} s "
                               "(EXPLORER_SECONDS).")

    def afford(self, size: int, what: str) -> None:
        """Refuse at once what would read `size` bytes more than is left (before reading)."""
        if self.read + size > self.max_bytes:
            raise ExploreError(413, f"{what} would read {quantity(size)} of the data, more "
                               f"than {quantity(self.max_bytes)} (EXPLORER_READ_BYTES): "
                               "choose a smaller part.")


class Relay:
    """The budget of whichever request reads, for what is kept open between requests (a
    dataset's store or file): each request sets its own while it reads."""

    def __init__(self, budget: Budget | None = None) -> None:
        self.current = budget

    def _now(self) -> Budget:
        if self.current is None:
            raise ExploreError(500, "A read outside any request.")
        return self.current

    def spend(self, size: int) -> None:
        self._now().spend(size)

    def in_time(self) -> None:
        self._now().in_time()


#: What the readers spend: a request's budget, or a relay to it.
Spending = Budget | Relay


class BoundedFile:
    """A binary file whose reads spend a budget (what h5netcdf and pyarrow read through)."""

    mode = "rb"

    def __init__(self, raw: Any, budget: Spending) -> None:
        self.raw = raw
        self.budget = budget

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.budget.spend(len(data))
        return bytes(data)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self.raw.seek(offset, whence))

    def tell(self) -> int:
        return int(self.raw.tell())

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    @property
    def closed(self) -> bool:
        return bool(self.raw.closed)

    @property
    def size(self) -> Any:
        return getattr(self.raw, "size", None)

    def close(self) -> None:
        self.raw.close()

    def flush(self) -> None:
        pass

    def __enter__(self) -> BoundedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BoundedStore(WrapperStore[Any]):
    """A Zarr store whose reads spend a budget: every chunk and metadata document."""

    def __init__(self, store: Any, budget: Spending) -> None:
        super().__init__(store)
        self.budget = budget

    def _with_store(self, store: Any) -> BoundedStore:
        return type(self)(store, self.budget)

    async def get(self, key: str, prototype: BufferPrototype,
                  byte_range: ByteRequest | None = None) -> Buffer | None:
        self.budget.in_time()
        found = await self._store.get(key, prototype, byte_range)
        if found is not None:
            self.budget.spend(len(found))
        return found

    async def get_partial_values(self, prototype: BufferPrototype,
                                 key_ranges: Iterable[tuple[str, ByteRequest | None]]
                                 ) -> list[Buffer | None]:
        self.budget.in_time()
        found = await self._store.get_partial_values(prototype, key_ranges)
        self.budget.spend(sum(len(each) for each in found if each is not None))
        return found


class _Remembered(BoundedFile):
    """A file of a `BoundedFileSystem`: small reads it has made before in this request (a
    Parquet footer, read once by each statement) answered again without the storage."""

    def __init__(self, raw: Any, budget: Spending, kept: dict[tuple[int, int], bytes]
                 ) -> None:
        super().__init__(raw, budget)
        self.kept = kept

    def read(self, size: int = -1) -> bytes:
        if not 0 < size <= KEPT_READ:
            return super().read(size)
        key = (self.tell(), size)
        found = self.kept.get(key)
        if found is None:
            found = self.kept[key] = super().read(size)
        else:
            self.seek(key[0] + len(found))
        return found


#: The largest read a request's file keeps for another statement to read again.
KEPT_READ = 1 << 20


class BoundedFileSystem(AbstractFileSystem):
    """One file of another filesystem, as DuckDB reads it (`explore://<path>`), its reads
    spending a budget; nothing else of that filesystem is reachable through it. Every
    statement opens the file anew: its size is asked once, and its small reads kept."""

    protocol = "explore"

    def __init__(self, inner: Any, path: str, budget: Budget) -> None:
        super().__init__(skip_instance_cache=True)
        self.inner = inner
        self.path = path
        self.budget = budget
        self._info: dict[str, Any] | None = None
        self._kept: dict[tuple[int, int], bytes] = {}

    @property
    def url(self) -> str:
        return f"explore://{self.path}"

    def _inner(self, path: str) -> str:
        stripped = str(path).removeprefix("explore://")
        if stripped.strip("/") != self.path.strip("/"):
            raise FileNotFoundError(path)
        return self.path

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        if "r" not in mode or "+" in mode:
            raise PermissionError("read only")
        inner = self._inner(path)
        size = self.info(path).get("size")
        try:  # its size known: the storage is not asked again at each opening
            raw = self.inner.open(inner, "rb", block_size=BLOCK, size=size)
        except TypeError:  # a filesystem that takes no size
            raw = self.inner.open(inner, "rb", block_size=BLOCK)
        return _Remembered(raw, self.budget, self._kept)

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        if self._info is None:
            self._info = dict(self.inner.info(self._inner(path)))
        else:
            self._inner(path)
        return {**self._info, "name": self.url, "type": "file"}

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        found = self.info(path)
        return [found] if detail else [found["name"]]

    def exists(self, path: str, **kwargs: Any) -> bool:
        try:
            self._inner(path)
        except FileNotFoundError:
            return False
        return True

    def modified(self, path: str) -> datetime:
        self._inner(path)
        return datetime(1970, 1, 1, tzinfo=UTC)  # the file is read once, never cached
