"""The benchmark's scenarios: the same queries for every server, in the same order."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from tests.bench import dataset
from tests.bench.wrk import Request


@dataclass(frozen=True)
class Scenario:
    name: str
    reads: bool  # a read: its answers are compared between servers
    peerless: bool = False  # geocatalog only (no stock equivalent)


SCENARIOS = [
    Scenario("items limit=10", True),
    Scenario("items limit=100", True),
    Scenario("single item", True),
    Scenario("single item, 60,000 ids", True),
    Scenario("GET /search bbox+datetime limit=100", True),
    Scenario("POST /search bbox+datetime limit=100", True),
    Scenario("POST item", False),
    Scenario("GET /search owner limit=100", True),
]
HUNDREDS = ["items limit=100", "GET /search bbox+datetime limit=100",
            "POST /search bbox+datetime limit=100"]
#: how many ids each single-item scenario reads in turn: 300, all kept rendered after the
#: warm-up; 60,000, more than the API keeps rendered, so each read renders its item (cold)
SINGLE_ITEM_IDS = {"single item": 300, "single item, 60,000 ids": 60_000}
#: the requests whose fixed per-request costs (metrics, middlewares) weigh most
CHEAPEST = ["single item", "items limit=10", "GET /search bbox+datetime limit=100"]


def _windows(count: int = 12, seed: int = 11) -> list[tuple[list[float], str]]:
    """Bounding boxes (~60x40 degrees) and two-year datetime windows: hundreds of matches."""
    rng = random.Random(seed)
    windows = []
    for _ in range(count):
        west, south = rng.uniform(-170, 100), rng.uniform(-70, 20)
        year = rng.randrange(2018, 2023)
        windows.append(([round(west, 3), round(south, 3), round(west + 60, 3),
                         round(south + 40, 3)],
                        f"{year}-01-01T00:00:00Z/{year + 1}-12-31T23:59:59Z"))
    return windows


def requests(name: str, total_items: int, geocatalog: bool) -> list[Request]:
    """The request list of scenario `name`, spelled for geocatalog or for stock."""
    collections = dataset.COLLECTIONS
    if name.startswith("items limit="):
        limit = name.removeprefix("items limit=")
        return [Request("GET", f"/collections/{c}/items?limit={limit}") for c in collections]
    if name in SINGLE_ITEM_IDS:
        rng = random.Random(5)
        picks = rng.sample(range(total_items), min(total_items, SINGLE_ITEM_IDS[name]))
        return [Request("GET", f"/collections/{collections[n % 3]}/items/"
                               f"{collections[n % 3]}-{n:06d}") for n in picks]
    if name.startswith("GET /search bbox"):
        return [Request("GET", "/search?" + urlencode(
            {"bbox": ",".join(map(str, bbox)), "datetime": when, "limit": 100}))
            for bbox, when in _windows()]
    if name.startswith("POST /search bbox"):
        return [Request("POST", "/search", json.dumps({"bbox": bbox, "datetime": when,
                                                        "limit": 100}))
                for bbox, when in _windows()]
    if name == "POST item":
        item = dataset.item(random.Random(3), dataset.WRITES, 0)
        item["id"] = "{{n}}"
        return [Request("POST", f"/collections/{dataset.WRITES}/items", json.dumps(item))]
    if name == "GET /search owner limit=100":
        owners = dataset.OWNERS[:40]
        if geocatalog:
            return [Request("GET", f"/search?owner={o}&limit=100") for o in owners]
        # Stock has no `owner` parameter: the same query as a CQL2 filter.
        return [Request("GET", "/search?filter-lang=cql2-text&limit=100&filter="
                               + quote(f"owner = '{o}'")) for o in owners]
    raise KeyError(name)


def search_bodies() -> dict[str, list[dict[str, object]]]:
    """The pgstac `search()` bodies of the 100-item scenarios (for the SQL floor)."""
    return {
        "items limit=100": [{"collections": [c], "limit": 100} for c in dataset.COLLECTIONS],
        "GET /search bbox+datetime limit=100": [
            {"bbox": bbox, "datetime": when, "limit": 100} for bbox, when in _windows()],
    }
