"""Bulk loading of STAC collections and items through pypgstac's loader.

Reads ndjson, STAC JSON (an item, a collection, a FeatureCollection, a list) or a static
STAC catalog (a folder holding `catalog.json` / `collection.json`, or that file itself).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pystac
from pypgstac.db import PgstacDB
from pypgstac.load import Loader, Methods

from stac_ext.platform.database import statistics
from stac_ext.platform.database.load_workers import Rule, load_items


class LoadMethod(StrEnum):
    insert = "insert"
    upsert = "upsert"
    ignore = "ignore"


class LoadError(ValueError):
    """The input is not STAC this loader understands; the message says why."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Without the cycle collector: a load's documents are trees (nothing to collect), and
    its passes over a million of them made reading them 3-4 times slower."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _read_documents(path: Path, text: bytes) -> Iterator[dict[str, Any]]:
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    yield orjson.loads(line)
                except orjson.JSONDecodeError as e:
                    raise LoadError(f"{path}:{n}: not JSON ({e})") from e
        return
    if isinstance(doc, list):
        yield from doc
    elif doc.get("type") == "FeatureCollection":
        yield from doc.get("features", [])
    else:
        yield doc


def _static_catalog(root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    catalog = pystac.read_file(str(root))
    if not isinstance(catalog, pystac.Catalog):
        raise LoadError(f"{root} is not a STAC catalog or collection")
    collections, items = [], []
    for parent, _children, parent_items in catalog.walk():
        if isinstance(parent, pystac.Collection):
            collections.append(parent.to_dict(include_self_link=False, transform_hrefs=False))
        for item in parent_items:
            owner = item.get_collection() or parent
            doc = item.to_dict(include_self_link=False, transform_hrefs=False)
            doc["collection"] = owner.id
            items.append(doc)
    return collections, items


def read_stac(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split the STAC documents at `path` into (collections, items)."""
    if path.is_dir():
        for name in ("catalog.json", "collection.json"):
            if (path / name).exists():
                return _static_catalog(path / name)
        raise LoadError(f"{path}: a folder must hold catalog.json or collection.json")
    if not path.exists():
        raise LoadError(f"{path}: no such file")
    documents = list(_read_documents(path, path.read_bytes()))
    first = documents[0] if documents else None
    if isinstance(first, dict) and first.get("type") == "Catalog":
        return _static_catalog(path)
    collections, items = [], []
    for doc in documents:
        kind = doc.get("type") if isinstance(doc, dict) else None
        if kind == "Collection":
            collections.append(doc)
        elif kind == "Feature":
            if not doc.get("collection"):
                raise LoadError(f"{path}: item {doc.get('id')!r} names no collection")
            items.append(doc)
        else:
            raise LoadError(f"{path}: unexpected document of type {kind!r}")
    return collections, items


#: Which of the wanted collections exist, each with whether it holds items (the search
#: index's markers); which of the wanted (collection, id) items exist (the search index: one
#: table, however many partitions).
EXISTING_COLLECTIONS = """
SELECT c.id, EXISTS (SELECT 1 FROM geocatalog.populated_collections p WHERE p.collection = c.id)
FROM pgstac.collections c WHERE c.id = ANY(%s)
"""
EXISTING_ITEMS = """
SELECT i.collection, i.id
FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS wanted(collection, id, n)
JOIN geocatalog.search_items i ON i.collection = wanted.collection AND i.id = wanted.id
ORDER BY wanted.n
"""


def _more(count: int) -> str:
    return f" (and {count - 1} more)" if count > 1 else ""




def _broken(source: Path, documents: list[dict[str, Any]], rule: Rule) -> None:
    problems = [why for why in rule(documents) if why]
    if problems:
        raise LoadError(f"{source}: {problems[0].rstrip('.')}{_more(len(problems))}: fix "
                        "the file; nothing was loaded")


def _once_each(source: Path, collections: list[dict[str, Any]],
               items: list[dict[str, Any]]) -> None:
    """Each collection and item once in the file: a second of one id failed the load half
    way (insert: a unique violation; upsert: a row changed twice in one statement)."""
    seen: set[str] = set()
    twice = []
    for what in [f"collection {str(c.get('id'))!r}" for c in collections] + \
            [f"item {str(i.get('id'))!r} of the collection {str(i['collection'])!r}"
             for i in items]:
        if what in seen:
            twice.append(what)
        seen.add(what)
    if twice:
        raise LoadError(f"{source}: {twice[0]} is in the file twice{_more(len(twice))}: keep "
                        "one; nothing was loaded")


def check(dsn: str, source: Path, collections: list[dict[str, Any]],
          items: list[dict[str, Any]], method: LoadMethod,
          item_rule: Rule | None = None, collection_rule: Rule | None = None) -> None:
    """Refuse, before anything is written, what the load would fail on or the API would
    refuse: items and collections that break the rules, items of unknown collections,
    and (with `insert`) ids that exist already. One line, naming the fix."""
    import psycopg

    if collection_rule is not None:
        _broken(source, collections, collection_rule)
    if item_rule is not None:
        _broken(source, items, item_rule)
    _once_each(source, collections, items)
    in_file = {c.get("id") for c in collections}
    wanted = sorted({str(i["collection"]) for i in items} | {str(c) for c in in_file if c})
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(EXISTING_COLLECTIONS, (wanted,)).fetchall()
        stored = {collection for collection, _ in rows}
        known = stored | in_file
        missing = [i for i in items if i["collection"] not in known]
        if missing:
            raise LoadError(f"{source}: item {missing[0].get('id')!r} names the collection "
                            f"{missing[0]['collection']!r}, which does not exist"
                            f"{_more(len(missing))}: load the collection first, or put it in "
                            "the same file")
        if method is not LoadMethod.insert:
            return
        if clash := sorted(stored & in_file):
            raise LoadError(f"{source}: collection {clash[0]!r} exists already"
                            f"{_more(len(clash))}: load with --method upsert to replace, or "
                            "--method ignore to keep what is stored")
        # only items of collections holding some can exist (a new collection's are not
        # looked up: a CF catalog's load brings thousands)
        populated = {collection for collection, holds_items in rows if holds_items}
        maybe = [i for i in items if str(i["collection"]) in populated]
        found = conn.execute(EXISTING_ITEMS, ([str(i["collection"]) for i in maybe],
                                              [str(i.get("id")) for i in maybe])).fetchall()
        if found:
            raise LoadError(f"{source}: item {found[0][1]!r} is already in the collection "
                            f"{found[0][0]!r}{_more(len(found))}: load with --method upsert "
                            "to replace, or --method ignore to keep what is stored")


def with_properties(items: list[dict[str, Any]], **properties: str | None
                    ) -> list[dict[str, Any]]:
    """The items with these properties set (those given, not None): `owner`, as the API
    sets it from the token; `visibility` and `project`, as a writer chooses them."""
    chosen = {k: v for k, v in properties.items() if v is not None}
    if not chosen:
        return items
    return [{**i, "properties": {**(i.get("properties") or {}), **chosen}} for i in items]


def load(
    dsn: str,
    collections: list[dict[str, Any]],
    items: Iterable[dict[str, Any]],
    method: LoadMethod = LoadMethod.insert,
    progress: Callable[[int], None] | None = None,
    workers: int = 1,
) -> None:
    """Load collections then items; `progress(n)` is called as each share of the items is
    written (whole collections, by `workers` processes: see `load_workers`).

    pypgstac writes each partition (a collection, or a time range of one) in a transaction
    of its own: `check` first refuses what would fail on the data, so that a failure here
    is the database's (run the same load again with `--method upsert` to complete it)."""
    if collections:
        with PgstacDB(dsn=dsn) as db:
            Loader(db=db).load_collections(iter(collections), Methods(method.value))
    load_items(dsn, list(items), method.value, workers, progress)
    with psycopg.connect(dsn, autocommit=True) as conn:  # searches plan with the new rows
        statistics.refresh(conn)
