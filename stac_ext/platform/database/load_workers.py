"""A load's work split over processes: the checks of its documents, and the items written
by several pypgstac loaders at once.

Both are CPU-bound (the checks; pypgstac's Python turning each item into a row while the
server writes rows, partition indexes and the search index): processes use every core
where threads share one interpreter. The documents reach them by fork, not by pickling.
Each loader writes whole collections (two on one partition would contend for pgstac's
partition bounds), the largest shares first so that the processes finish together.

Each share is written in a database session of its own. PostgreSQL keeps every plan a
session prepared (the search index's triggers hold a set per partition) and checks them all
at each catalog change, of which creating a partition makes a dozen: one session creating
thousands of partitions slowed as it went (1,500 new collections: 64 s in one session,
38 s in sessions of 100). Its partitions are made first, by geocatalog's `make_partition`
(a new collection's in about half the time of pgstac's `check_partition`, which the loader
would call): the loader then finds them made, their constraints wide enough.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from itertools import chain
from typing import Any

import psycopg
from pypgstac.db import PgstacDB
from pypgstac.load import Loader, Methods

#: Items per share: large enough that the per-share cost (a partition's transaction, its
#: statistics) stays small, small enough to balance.
SHARE_ITEMS = 5_000

#: Collections per share at most: a share's session creates their partitions (see above).
SHARE_COLLECTIONS = 100

#: Documents per check task.
CHECK_DOCUMENTS = 10_000

#: What every stored item and collection must be (the data API's rules: id, geometry,
#: hrefs), handed in by the caller: `rule(documents)` says what is wrong with each (naming
#: it), or None.
Rule = Callable[[list[dict[str, Any]]], list[str | None]]

# What a worker reads after fork: set by the parent before the pool starts.
_documents: list[dict[str, Any]] = []
_rule: Rule | None = None
_shares: list[list[dict[str, Any]]] = []
_dsn = ""


def _check(bounds: tuple[int, int]) -> list[str | None]:
    assert _rule is not None
    return _rule(_documents[bounds[0]:bounds[1]])


def in_processes(rule: Rule, workers: int) -> Rule:
    """`rule`, run by `workers` processes over slices of the documents (same answers)."""

    def parallel(documents: list[dict[str, Any]]) -> list[str | None]:
        global _documents, _rule
        if workers <= 1 or len(documents) <= CHECK_DOCUMENTS:
            return rule(documents)
        _documents, _rule = documents, rule
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                slices = [(start, start + CHECK_DOCUMENTS)
                          for start in range(0, len(documents), CHECK_DOCUMENTS)]
                return list(chain.from_iterable(pool.map(_check, slices)))
        finally:
            _documents, _rule = [], None

    return parallel


def shares(items: list[dict[str, Any]], size: int = SHARE_ITEMS,
           collections: int = SHARE_COLLECTIONS) -> list[list[dict[str, Any]]]:
    """The items in shares of whole collections (about `size` items, at most `collections`
    collections; a larger collection is a share of its own), the largest first."""
    by_collection: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_collection.setdefault(str(item["collection"]), []).append(item)
    out: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    held = 0
    for group in by_collection.values():
        if current and (len(current) + len(group) > size or held == collections):
            out.append(current)
            current, held = [], 0
        current.extend(group)
        held += 1
    if current:
        out.append(current)
    return sorted(out, key=len, reverse=True)


#: A new collection's partition made, or an existing one widened (collections partitioned
#: by time are left to the loader: their items span several partitions).
MAKE_PARTITION = """
SELECT geocatalog.make_partition(c.id, tstzrange(%s, %s, '[]'), tstzrange(%s, %s, '[]'))
FROM pgstac.collections c WHERE c.id = %s AND c.partition_trunc IS NULL
"""


def _time(value: Any) -> datetime:
    """An item's time as pgstac reads it (UTC where it names no zone); ValueError if not
    ISO 8601 (the loader makes that partition)."""
    when = datetime.fromisoformat(value)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def spans(share: list[dict[str, Any]]) -> dict[str, tuple[datetime, datetime, datetime,
                                                          datetime]]:
    """Each collection's first and last start and end times in the share (pgstac's: the
    start and end times where an item has both, else its datetime), where all are read."""
    out: dict[str, tuple[datetime, datetime, datetime, datetime]] = {}
    unread: set[str] = set()
    for item in share:
        collection, p = str(item["collection"]), item.get("properties") or {}
        if collection in unread:
            continue
        start, end = p.get("start_datetime"), p.get("end_datetime")
        if start is None or end is None:
            start = end = p.get("datetime")
        try:
            s, e = _time(start), _time(end)
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


def make_partitions(conn: psycopg.Connection[Any], share: list[dict[str, Any]]) -> None:
    """The share's partitions, made or widened, one transaction each, as the loader makes
    them (each locks pgstac.items)."""
    for collection, (first, last, first_end, last_end) in spans(share).items():
        conn.execute(MAKE_PARTITION, (first, last, first_end, last_end, collection))


def write_share(dsn: str, share: list[dict[str, Any]], method: str) -> int:
    """One share written by pypgstac's loader, in a session of its own."""
    with PgstacDB(dsn=dsn) as db:
        make_partitions(db.connect(), share)
        Loader(db=db).load_items(iter(share), Methods(method))
    return len(share)


def _load(share: tuple[int, str]) -> int:
    number, method = share
    return write_share(_dsn, _shares[number], method)


def load_items(dsn: str, items: list[dict[str, Any]], method: str, workers: int,
               progress: Callable[[int], None] | None = None) -> None:
    """Load `items` with `workers` processes (one: this one); `progress(n)` as each share
    is written. The first failure stops the load (the shares written stay, as with
    pypgstac's loader)."""
    global _shares, _dsn
    split = shares(items)
    if workers <= 1 or len(split) <= 1:
        for share in split:
            written = write_share(dsn, share, method)
            if progress:
                progress(written)
        return
    _shares, _dsn = split, dsn
    context = multiprocessing.get_context("fork")
    pool = context.Pool(min(workers, len(_shares)))
    try:
        done: Iterator[int] = pool.imap_unordered(_load, [(n, method)
                                                          for n in range(len(_shares))])
        for count in done:
            if progress:
                progress(count)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        _shares = []
