"""The partitions a load's items go to, made before the items are written.

pypgstac's loader makes each new collection's partition itself, with pgstac's
`check_partition`. A load makes them first, with geocatalog's `make_partition` (a new
collection's in about half the time): the loader then finds them made, their time
constraints wide enough. One session makes them all, share after share, while other
sessions write the shares made: `make_partition` attaches a new table, which leaves writers
free to write (a table made `PARTITION OF` pgstac.items would lock out every writer of
every partition until it commits), and each new partition costs PostgreSQL a rebuild of
pgstac.items' partition bounds in each session that makes one (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg

#: A new collection's partition made, or an existing one widened (collections partitioned
#: by time are left to the loader: their items span several partitions).
MAKE_PARTITION = """
SELECT geocatalog.make_partition(c.id, tstzrange(%s, %s, '[]'), tstzrange(%s, %s, '[]'))
FROM pgstac.collections c WHERE c.id = %s AND c.partition_trunc IS NULL
"""

#: Those of the collections named that are not partitioned by time (one partition each).
UNPARTITIONED = """
SELECT c.id FROM pgstac.collections c WHERE c.id = ANY(%s) AND c.partition_trunc IS NULL
"""


def _time(value: Any) -> datetime:
    """An item's time as pgstac reads it (UTC where it names no zone); ValueError if not
    ISO 8601 (the loader makes that partition)."""
    when = datetime.fromisoformat(value)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _times(item: dict[str, Any]) -> tuple[datetime, datetime]:
    """An item's start and end times as pgstac reads them (the start and end times where it
    has both, else its datetime); TypeError or ValueError where one is not read."""
    p = item.get("properties") or {}
    start, end = p.get("start_datetime"), p.get("end_datetime")
    if start is None or end is None:
        start = end = p.get("datetime")
    return _time(start), _time(end)


def spans(share: list[dict[str, Any]]) -> dict[str, tuple[datetime, datetime, datetime,
                                                          datetime]]:
    """Each collection's first and last start and end times in the share, where all are
    read."""
    out: dict[str, tuple[datetime, datetime, datetime, datetime]] = {}
    unread: set[str] = set()
    for item in share:
        collection = str(item["collection"])
        if collection in unread:
            continue
        try:
            s, e = _times(item)
        except (TypeError, ValueError):
            unread.add(collection)
            out.pop(collection, None)
            continue
        if (known := out.get(collection)) is not None:
            out[collection] = (min(known[0], s), max(known[1], s), min(known[2], e),
                               max(known[3], e))
        else:
            out[collection] = (s, s, e, e)
    return out


def bounding(items: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The items holding the first and last start and end times of `items` (at most four,
    in their order), or None where a time is not read."""
    try:
        times = [_times(item) for item in items]
    except (TypeError, ValueError):
        return None
    held = set()
    for edge in (0, 1):
        held.add(min(range(len(items)), key=lambda k: times[k][edge]))
        held.add(max(range(len(items)), key=lambda k: times[k][edge]))
    return [items[k] for k in sorted(held)]


def make_partitions(conn: psycopg.Connection[Any], share: list[dict[str, Any]]) -> None:
    """The share's partitions, made or widened, one transaction each (each holds a lock of
    pgstac.items), as the loader makes them."""
    for collection, (first, last, first_end, last_end) in spans(share).items():
        conn.execute(MAKE_PARTITION, (first, last, first_end, last_end, collection))


def made(conn: psycopg.Connection[Any], shares: list[list[dict[str, Any]]]
         ) -> Iterator[int]:
    """The number of each share once its partitions are made, in order, in one session."""
    for number, share in enumerate(shares):
        make_partitions(conn, share)
        yield number
