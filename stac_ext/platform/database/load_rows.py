"""A load's rows made ahead of pypgstac's loader.

The loader turns each item into its row (`Loader.format_item`: dehydrated content, EWKB
geometry, partition) and writes a batch of rows, one after the other in one thread. Its
session mostly waits on the server while a batch is written (the partition's indexes, the
search index's rows, the partition's statistics); a thread of its own makes the next rows
meanwhile, so that the session and the server do not take turns (docs/performance.md).

The loader asks pgstac to widen an item's partition when the item's time falls outside the
partition's bounds, comparing the two as text: the bounds as it reads them (ISO 8601 in the
session's zone, `+00:00`) against the item's as written (`Z`, another offset). Each row's
times are therefore written in UTC in the bounds' form, and the loader's session reads them
in UTC: an item inside its partition no longer costs a call to pgstac's `check_partition`
(one per partition and load).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from pypgstac.db import PgstacDB
from pypgstac.load import Loader, as_utc

#: Rows made ahead of the loader: two of its batches (it writes 10,000 rows a statement).
ROWS_AHEAD = 20_000

#: The thread's name (a test looks for it).
THREAD_NAME = "pgstac-rows"

_DONE = object()


def in_utc(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with its times in UTC, as the loader reads its partitions' bounds (a time it
    cannot read is left to the database)."""
    for key in ("datetime", "end_datetime"):
        value = row[key]
        if len(value) == 20 and value[10] == "T" and value[19] == "Z":  # the usual form
            row[key] = value[:19] + "+00:00"
        elif (when := as_utc(value)) is not None:
            row[key] = when.isoformat()
    return row


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def rows(dsn: str, items: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """pypgstac's rows of `items`, in order, made by a thread (in a session of its own: the
    loader reads each collection's base item) up to `ROWS_AHEAD` ahead of the reader. Its
    failure is raised here; a reader that stops early stops it."""
    made: queue.Queue[Any] = queue.Queue(maxsize=ROWS_AHEAD)
    stop = threading.Event()

    def make() -> None:
        try:
            with PgstacDB(dsn=dsn) as db:
                loader = Loader(db=db)
                for item in items:
                    if stop.is_set():
                        return
                    made.put(in_utc(loader.format_item(item)))
        except BaseException as e:  # handed to the reader, which raises it
            made.put(_Failed(e))
        else:
            made.put(_DONE)

    maker = threading.Thread(target=make, name=THREAD_NAME, daemon=True)
    maker.start()
    try:
        while (row := made.get()) is not _DONE:
            if isinstance(row, _Failed):
                raise row.error
            yield row
    finally:
        stop.set()
        while maker.is_alive():  # a put waiting on the full queue returns; `stop` is seen
            try:
                made.get_nowait()
            except queue.Empty:
                maker.join(0.05)


class RowLoader(Loader):
    """pypgstac's loader, given the rows `rows` made (its own step that makes them, a
    no-op)."""

    def format_item(self, _item: Any) -> dict[str, Any]:
        row: dict[str, Any] = _item
        return row
