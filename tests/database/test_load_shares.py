"""How a load's items are split between loaders and sessions (`load_workers.shares`):
whole collections, bounded in items and in collections (each share's session creates its
collections' partitions), every item once, the largest share first."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from stac_ext.platform.database.load_workers import SHARE_COLLECTIONS, SHARE_ITEMS, shares

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
