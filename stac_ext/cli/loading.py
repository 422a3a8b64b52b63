"""`geocatalog load` and `demo-data`'s work: a file (or folder) of STAC documents read,
checked as the data API would check them, and loaded with a progress bar."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from stac_ext.data_api.hrefs import href_problem
from stac_ext.data_api.item_rules import ItemRules
from stac_ext.platform.database.load_workers import in_processes
from stac_ext.platform.database.loader import (
    LoadError,
    LoadMethod,
    check,
    gc_paused,
    load,
    read_stac,
    with_properties,
)
from stac_ext.settings import Settings


class LoadRefused(Exception):
    """What stopped a load, in one line for the person who ran it."""


def counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def collection_problems(collections: list[dict[str, Any]]) -> list[str | None]:
    """What the data API would refuse in each collection it is given, or None."""
    return [f"collection {c.get('id')!r}: {problem}" if (problem := href_problem(c)) else None
            for c in collections]


def load_path(settings: Settings, path: Path, method: LoadMethod,
               owner: str | None = None, workers: int = 1, visibility: str | None = None,
               project: str | None = None) -> tuple[int, int]:
    """(collections, items) loaded from `path`, each item's owner, visibility and project
    set where given; `LoadRefused` says why not."""
    with gc_paused():
        try:
            collections, items = read_stac(path)
            items = with_properties(items, owner=owner, visibility=visibility,
                                    project=project)
            check(settings.dsn, path, collections, items, method,
                  item_rule=in_processes(ItemRules.from_settings(settings).problems, workers),
                  collection_rule=collection_problems)
        except LoadError as e:
            raise LoadRefused(str(e)) from None
        _load_items(settings, path, collections, items, method, workers)
    return len(collections), len(items)


def _load_items(settings: Settings, path: Path, collections: list[dict[str, Any]],
                items: list[dict[str, Any]], method: LoadMethod, workers: int) -> None:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    shown = [0.0]

    def advance(n: int) -> None:  # drawn here, not by a thread: the load may fork
        bar.advance(task, n)
        if (now := time.monotonic()) - shown[0] > 0.2:
            shown[0] = now
            bar.refresh()

    try:
        with Progress(*columns, auto_refresh=False) as bar:
            task = bar.add_task(f"{path.name}: {counted(len(collections), 'collection')}, "
                                "items", total=len(items))
            load(settings.dsn, collections, items, method, progress=advance, workers=workers)
            bar.refresh()
    except Exception as e:  # the database's refusal, in one line
        first = (str(e).strip().splitlines() or [""])[0]
        raise LoadRefused(f"{path}: the load failed: {type(e).__name__}: {first} (partitions "
                    "loaded before the failure stay: complete with --method upsert)") from None


def load_demo_proposals(settings: Settings, path: Path) -> int:
    """The demo's open proposals, each with the items its proposer published for it,
    held as publishing holds them (a collection made since is left alone): how many."""
    import asyncio
    import json

    import asyncpg

    from stac_ext.data_api import queries
    from stac_ext.governance.proposals import Proposals

    rules = ItemRules.from_settings(settings)

    async def hold() -> int:
        conn = await asyncpg.connect(settings.dsn)
        try:
            held = 0
            for proposal in json.loads(path.read_text()):
                collection = proposal["collection"]
                if await conn.fetchval(queries.COLLECTION_EXISTS, collection):
                    continue
                items = [rules.prepare(item, collection, proposal["proposer"])
                         for item in proposal["items"]]
                async with conn.transaction():
                    await Proposals(conn).hold(collection, items, proposal["proposer"],
                                               proposal["comment"])
                held += 1
            return held
        finally:
            await conn.close()

    return asyncio.run(hold())
