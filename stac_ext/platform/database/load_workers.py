"""A load's work split over processes: the checks of its documents, and the items written
by several pypgstac loaders at once.

Both are CPU-bound (the checks; pypgstac's Python turning each item into a row while the
server writes rows, partition indexes and the search index): processes use every core
where threads share one interpreter. The documents reach them by fork, not by pickling.
Each loader writes whole collections, the largest shares first so that the processes finish
together; a large collection (one partition) is written in pieces by all of them at once.

Loaders writing one partition at once must not have pgstac's bounds of it narrowed under
them: after each batch, pypgstac's loader rebuilds the partition's time constraint to the
times its committed items hold, and a loader's next batch outside it would be refused. So a
divided collection's bounding items (those holding its first and last start and end times,
at most four) are written first, alone: every narrowing after them still holds the pieces.

Each share is written in a database session of its own. PostgreSQL keeps every plan a
session prepared (the search index's triggers hold a set per partition) and checks them all
at each catalog change, of which creating a partition makes a dozen: one session writing
thousands of new partitions slowed as it went (1,500 new collections: 64 s in one session,
38 s in sessions of 100). The partitions are made by one more session, the parent's, each
share's before the share is handed to a loader (`load_partitions`; with one process too),
and each loader's rows are made by a thread ahead of it (`load_rows`).
"""

from __future__ import annotations

import multiprocessing
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from contextlib import suppress
from itertools import chain
from typing import Any

import psycopg
from pypgstac.db import PgstacDB
from pypgstac.load import Methods

from stac_ext.platform.database.load_partitions import (
    UNPARTITIONED,
    bounding,
    made,
    make_partitions,
)
from stac_ext.platform.database.load_rows import RowLoader, rows

#: Items per share: large enough that the per-share cost (a partition's transaction, its
#: statistics) stays small, small enough to balance.
SHARE_ITEMS = 5_000

#: Collections per share at most: a share's session writes to their new partitions (see
#: above).
SHARE_COLLECTIONS = 100

#: A collection of more items than this, not partitioned by time, is written in pieces of
#: this size, its bounding items first (above): every loader writes a large collection, not
#: one alone (docs/performance.md).
PIECE_ITEMS = 20_000

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
_method = ""


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
           collections: int = SHARE_COLLECTIONS, divided: Collection[str] = ()
           ) -> list[list[dict[str, Any]]]:
    """The items in shares of whole collections (about `size` items, at most `collections`
    collections; a larger collection is a share of its own, a `divided` one shares of
    `PIECE_ITEMS`), the largest first."""
    by_collection: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_collection.setdefault(str(item["collection"]), []).append(item)
    out: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    held = 0
    for collection, group in by_collection.items():
        if collection in divided:
            out.extend(group[k:k + PIECE_ITEMS] for k in range(0, len(group), PIECE_ITEMS))
            continue
        if current and (len(current) + len(group) > size or held == collections):
            out.append(current)
            current, held = [], 0
        current.extend(group)
        held += 1
    if current:
        out.append(current)
    return sorted(out, key=len, reverse=True)


#: A load's sessions commit without waiting for the disk (each new partition is a
#: transaction of its own); the load ends with one commit that waits (`DURABLE`), which
#: makes every commit before it durable too: the log is written in order. A failed load's
#: commits are made durable the same way.
ASYNCHRONOUS = "SET synchronous_commit TO off"
DURABLE = "SELECT pg_current_xact_id()"

#: The loader reads its partitions' bounds in UTC, the zone of the rows' times (`load_rows`).
IN_UTC = "SET TimeZone TO 'UTC'"


def write_share(dsn: str, share: list[dict[str, Any]], method: str) -> int:
    """One share, its partitions made, written by pypgstac's loader in a session of its
    own."""
    with PgstacDB(dsn=dsn) as db:
        conn = db.connect()
        conn.execute(ASYNCHRONOUS)
        conn.execute(IN_UTC)
        RowLoader(db=db).load_items(rows(dsn, share), Methods(method))
    return len(share)


def _load(number: int) -> int:
    return write_share(_dsn, _shares[number], _method)


def leading(dsn: str, items: list[dict[str, Any]], method: str, workers: int
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
    """The bounding items of the collections written in pieces, the other items, and those
    collections: the large ones in one partition whose times are read, when several
    loaders insert."""
    if workers <= 1 or method != "insert":
        return [], items, set()
    sizes = Counter(str(item["collection"]) for item in items)
    large = [collection for collection, size in sizes.items() if size > PIECE_ITEMS]
    if not large:
        return [], items, set()
    with psycopg.connect(dsn) as conn:
        groups: dict[str, list[dict[str, Any]]] = {
            row[0]: [] for row in conn.execute(UNPARTITIONED, (large,))}
    for item in items:
        if (group := groups.get(str(item["collection"]))) is not None:
            group.append(item)
    lead: list[dict[str, Any]] = []
    for group in groups.values():
        if (bounds := bounding(group)) is not None:
            lead.extend(bounds)
    held = {id(item) for item in lead}
    return (lead, [item for item in items if id(item) not in held],
            {str(item["collection"]) for item in lead})


def _write(dsn: str, items: list[dict[str, Any]], method: str, workers: int,
           progress: Callable[[int], None] | None) -> None:
    global _shares, _dsn, _method
    lead, rest, divided = leading(dsn, items, method, workers)
    split = shares(rest, divided=divided)
    if not split:
        return
    _shares, _dsn, _method = split, dsn, method
    # forked before the session below is opened: the loaders must not share its socket
    pool = (multiprocessing.get_context("fork").Pool(min(workers, len(split)))
            if workers > 1 and len(split) > 1 else None)
    conn: psycopg.Connection[Any] | None = None
    try:
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute(ASYNCHRONOUS)
        if lead:  # alone and first (above)
            make_partitions(conn, lead)
            written = write_share(dsn, lead, method)
            if progress:
                progress(written)
        ready = made(conn, split)  # each share's number once its partitions are made
        # with a pool, its feeding thread makes the partitions while loaders write
        done: Iterator[int] = pool.imap_unordered(_load, ready) if pool else map(_load, ready)
        for count in done:
            if progress:
                progress(count)
        if pool:
            pool.close()
    except BaseException:
        if pool:
            pool.terminate()  # its feeding thread stops using the session, closed below
        raise
    finally:
        if pool:
            pool.join()
        if conn is not None:
            conn.close()
        _shares = []


def load_items(dsn: str, items: list[dict[str, Any]], method: str, workers: int,
               progress: Callable[[int], None] | None = None) -> None:
    """Load `items` with `workers` processes (one: this one); `progress(n)` as each share
    is written. The first failure stops the load (the shares written stay, as with
    pypgstac's loader)."""
    try:
        _write(dsn, items, method, workers, progress)
    except BaseException:
        with suppress(psycopg.Error), psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(DURABLE)
        raise
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DURABLE)
