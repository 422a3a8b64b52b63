"""How a load's items are split between loaders and sessions (`load_workers.shares`):
whole collections, bounded in items and in collections (each share's session creates its
collections' partitions), every item once, the largest share first; a divided collection in
pieces, after its bounding items (`load_partitions.bounding`)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from stac_ext.platform.database.load_partitions import bounding
from stac_ext.platform.database.load_workers import (
    PIECE_ITEMS,
    SHARE_COLLECTIONS,
    SHARE_ITEMS,
    shares,
)

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit


def test_shares_hold_whole_collections_within_both_bounds() -> None:
    rng = random.Random(29)
    # many small collections (a CF catalog), a few large ones, one larger than a share
    sizes = [rng.randint(1, 40) for _ in range(1_200)] + [3_000, 4_000, 12_000]
    items = [{"id": f"{c}-{k}", "collection": f"c{c}"}
             for c, size in enumerate(sizes) for k in range(size)]
    rng.shuffle(items)
    split = shares(items)

    assert Counter(i["id"] for s in split for i in s) == Counter(i["id"] for i in items)
    owners = [{i["collection"] for i in s} for s in split]
    assert all(len(a & b) == 0 for n, a in enumerate(owners) for b in owners[n + 1:])
    assert all(len(held) <= SHARE_COLLECTIONS for held in owners)
    assert all(len(s) <= SHARE_ITEMS or len(held) == 1 for s, held in zip(split, owners,
                                                                          strict=True))
    assert [len(s) for s in split] == sorted((len(s) for s in split), reverse=True)
    # the bound on collections is what splits the small ones: 1,200 make 12 shares or more
    assert sum(1 for held in owners if len(held) == SHARE_COLLECTIONS) >= 10


def test_a_divided_collection_is_cut_in_pieces() -> None:
    items = ([{"id": f"big-{k}", "collection": "big"} for k in range(2 * PIECE_ITEMS + 7)]
             + [{"id": f"small-{k}", "collection": "small"} for k in range(30)])
    split = shares(items, divided={"big"})

    assert [(len(s), {i["collection"] for i in s}) for s in split] == [
        (PIECE_ITEMS, {"big"}), (PIECE_ITEMS, {"big"}), (30, {"small"}), (7, {"big"})]
    assert [i["id"] for s in split for i in s if i["collection"] == "big"] == [
        f"big-{k}" for k in range(2 * PIECE_ITEMS + 7)]


def _timed(item_id: str, **times: str) -> dict:
    return {"id": item_id, "collection": "c", "properties": times}


def test_the_bounding_items_hold_the_first_and_last_start_and_end() -> None:
    items = [_timed("mid", datetime="2021-03-01T00:00:00Z"),
             _timed("last-end", start_datetime="2021-02-01T00:00:00Z",
                    end_datetime="2021-12-31T00:00:00Z"),
             _timed("first", datetime="2020-01-01T00:00:00+01:00"),  # 2019-12-31 23:00 UTC
             _timed("first-naive", datetime="2020-01-01T00:00:00"),  # UTC: an hour later
             _timed("last-start", datetime="2021-06-01T00:00:00Z"),
             _timed("mid-2", datetime="2021-04-01T00:00:00Z")]

    assert [i["id"] for i in bounding(items) or []] == ["last-end", "first", "last-start"]
    assert [i["id"] for i in bounding(items[:1]) or []] == ["mid"]
    assert bounding([*items, _timed("unread", datetime="soon")]) is None
