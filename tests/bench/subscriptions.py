"""Subscriptions at scale: item writes with 10,000 subscriptions against the same writes
with none, on one running server (its dispatcher matching as it serves), in alternating
rounds (A B B A ...): POST item (wrk, items at 200 places in turn) and `geocatalog load`'s
loader (`loader.load`, as the command runs it, two workers). After a round with
subscriptions, the time the outbox took to be matched empty is noted (not part of the
write's figure: writes never wait for it).

The subscriptions are a mix a deployment might hold (`_search`): mostly a variable over a
region (1 to 20 degrees), some with a time window, words or a CQL2 filter, some a region
alone or an owner's items; written in SQL as the API writes them
(`subscriptions.criteria`), without webhooks (the receivers' part is the drills' in
tests/subscriptions/). The events they make (per item written) are reported beside.
"""

from __future__ import annotations

import json
import random
import statistics
import time
import uuid
from typing import Any

import psycopg

from stac_ext.platform.database.loader import load
from tests.bench import dataset, wrk
from tests.bench.servers import Running

SUBSCRIPTIONS = 10_000
#: Items of each load round (a collection of their own, emptied between rounds).
LOAD_ITEMS = 20_000
LOADED = "bench-subscriptions-load"
OWNERS = [f"bench-follower{n}" for n in range(500)]


def _search(rng: random.Random) -> dict[str, Any]:
    """A subscription as scientists make them: a variable (collection) over a region, some
    with a time window, words or a filter besides; some a region alone, some an owner's."""
    collections = [*dataset.COLLECTIONS, dataset.WRITES, LOADED]
    kind = rng.random()
    west, south = rng.uniform(-175, 160), rng.uniform(-75, 60)
    size = rng.choice([1, 2, 5, 10, 20])
    region = {"bbox": [west, south, min(180.0, west + size), min(85.0, south + size / 2)]}
    year = rng.randrange(2018, 2024)
    variable = {"collections": [rng.choice(collections)], **region}
    if kind < 0.5:
        return variable
    if kind < 0.65:
        return region
    if kind < 0.8:
        return {**variable, "datetime": f"{year}-01-01T00:00:00Z/{year}-12-31T23:59:59Z"}
    if kind < 0.9:
        return {**variable, "q": [rng.choice(["alpha", "beta gamma", "sea surface", "cloud"])]}
    if kind < 0.95:
        return {**variable, "filter-lang": "cql2-json",
                "filter": {"op": "<", "args": [{"property": "cloud_cover"},
                                               rng.randint(5, 60)]}}
    return {"owner": rng.choice(dataset.OWNERS)}


def prepare(dsn: str) -> None:
    """The 10,000 subscriptions, kept aside (`bench_subscriptions`) to be put in and out."""
    rng = random.Random(78)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM subscriptions.subscriptions WHERE owner LIKE 'bench-%'")
        conn.execute("DROP TABLE IF EXISTS public.bench_subscriptions")
        conn.execute("CREATE TABLE public.bench_subscriptions "
                     "(LIKE subscriptions.subscriptions INCLUDING DEFAULTS)")
        rows = []
        for _ in range(SUBSCRIPTIONS):
            owner = rng.choice(OWNERS)
            rows.append((str(uuid.uuid4()), owner, json.dumps(_search(rng)),
                         json.dumps({"user": owner, "groups": []})))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO public.bench_subscriptions (id, owner, search, collections, "
                "geometry, starts, ends, items_owner, condition, kinds, reader, "
                "reader_keys, service_url) "
                "SELECT %s, %s, %s::jsonb, c.collections, c.geometry, c.starts, c.ends, "
                "c.items_owner, c.condition, '{created,updated,deleted}', %s::jsonb, "
                "geocatalog.reader_keys(%s::jsonb), 'http://127.0.0.1/' "
                "FROM subscriptions.criteria(%s::jsonb) c",
                [(i, o, s, r, r, s) for i, o, s, r in rows])
        if not conn.execute("SELECT 1 FROM pgstac.collections WHERE id = %s",
                            (LOADED,)).fetchone():
            conn.execute("SELECT pgstac.create_collection(%s::jsonb)",
                         (json.dumps(dataset.collection(LOADED)),))


def _subscribed(dsn: str, present: bool) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM subscriptions.subscriptions WHERE owner LIKE 'bench-%'")
        if present:
            conn.execute("INSERT INTO subscriptions.subscriptions "
                         "SELECT * FROM public.bench_subscriptions")
            conn.execute("INSERT INTO subscriptions.progress (subscription_id, sending) "
                         "SELECT id, false FROM public.bench_subscriptions")
            conn.execute("ANALYZE subscriptions.subscriptions")


def _drained(dsn: str) -> tuple[float, int, int]:
    """Once the outbox is matched empty: how long it took, the events it made, and the items
    they were of."""
    started = time.monotonic()
    with psycopg.connect(dsn, autocommit=True) as conn:
        while True:
            row = conn.execute("SELECT count(*) FROM geocatalog.item_events").fetchone()
            if row is not None and row[0] == 0:
                break
            time.sleep(0.2)
        made = conn.execute("SELECT count(*), count(DISTINCT (e.collection, e.item_id)) "
                            "FROM subscriptions.events e "
                            "JOIN subscriptions.subscriptions s ON s.id = e.subscription_id "
                            "WHERE s.owner LIKE 'bench-%'").fetchone()
    return time.monotonic() - started, int(made[0]) if made else 0, \
        int(made[1]) if made else 0


def _emptied(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM pgstac.items WHERE collection = %s", (LOADED,))


def _loaded(dsn: str, run: int) -> float:
    rng = random.Random(run)
    items = [{**dataset.item(rng, LOADED, n), "id": f"l{run}-{n:06d}"}
             for n in range(LOAD_ITEMS)]
    started = time.monotonic()
    load(dsn, [], items, workers=2)
    return LOAD_ITEMS / (time.monotonic() - started)


def _posts(places: int = 200) -> list[wrk.Request]:
    """POST item at places across the world (the main set's scenario writes one place,
    which no subscription may cover): each request a new id, in turn."""
    rng = random.Random(11)
    requests = []
    for n in range(places):
        item = dataset.item(rng, dataset.WRITES, n)
        item["id"] = f"{n}-{{{{n}}}}"
        requests.append(wrk.Request("POST", f"/collections/{dataset.WRITES}/items",
                                    json.dumps(item)))
    return requests


def run(dsn: str, running: Running, token: str, seconds: float, pairs: int = 3
        ) -> dict[str, Any]:
    """Items per second with none and with 10,000 subscriptions: POST item and load."""
    prepare(dsn)
    post = _posts()
    figures: dict[str, dict[str, list[float]]] = {
        "post_item": {"none": [], "subscribed": []},
        "load": {"none": [], "subscribed": []}}
    drains: dict[str, list[tuple[float, int, int]]] = {"post_item": [], "load": []}
    wrk.run(running.url, post, seconds=2, connections=8, token=token, tag="subs-warm")
    for n in range(2 * pairs):
        for present in ((False, True) if n % 2 == 0 else (True, False)):
            _subscribed(dsn, present)
            state = "subscribed" if present else "none"
            slice_ = wrk.run(running.url, post, seconds=seconds, connections=8, token=token,
                             tag=f"subs{time.time_ns()}")
            figures["post_item"][state].append(slice_.ok_rps)
            if present:
                drains["post_item"].append(_drained(dsn))
            _emptied(dsn)
            figures["load"][state].append(_loaded(dsn, n * 2 + present))
            if present:
                drains["load"].append(_drained(dsn))
            _subscribed(dsn, False)
            _emptied(dsn)
            print(f"subscriptions {n + 1}/{2 * pairs} {state:10} POST item "
                  f"{figures['post_item'][state][-1]:8.1f} items/s, load "
                  f"{figures['load'][state][-1]:8.1f} items/s", flush=True)
    result: dict[str, Any] = {"subscriptions": SUBSCRIPTIONS, "load_items": LOAD_ITEMS,
                              "rounds": figures}
    for what, by_state in figures.items():
        none, subscribed = (statistics.median(by_state[s]) for s in ("none", "subscribed"))
        drained = drains[what]
        result[what] = {
            "none_items_s": round(none, 1), "subscribed_items_s": round(subscribed, 1),
            "cost_pct": round(100 * (1 - subscribed / none), 1),
            "matched_seconds_after": round(statistics.median(d[0] for d in drained), 1),
            "events": int(statistics.median(d[1] for d in drained)),
            "items": int(statistics.median(d[2] for d in drained))}
    return result


def table(result: dict[str, Any]) -> str:
    lines = [f"{'writes':12} {'0 subscriptions':>16} {'10,000':>10} {'cost':>7}"
             f" {'matched after':>14} {'events/item':>12}"]
    for what in ("post_item", "load"):
        r = result[what]
        lines.append(f"{what:12} {r['none_items_s']:>12.1f}/s {r['subscribed_items_s']:>8.1f}/s"
                     f" {r['cost_pct']:>6.1f}% {r['matched_seconds_after']:>12.1f} s"
                     f" {r['events'] / max(1, r['items']):>12.1f}")
    return "\n".join(lines)
