"""Reads and writes of the catalogs tree over one database connection."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import asyncpg
from fastapi import HTTPException
from stac_fastapi.types.errors import ConflictError, NotFoundError

from catalogs_ext import queries
from catalogs_ext.links import Target
from catalogs_ext.models import CatalogIn


def _json(value: Any) -> str:
    # the standard library, not orjson: a client's STAC fields may hold integers > 64 bits
    return json.dumps(value)


class CatalogStore:
    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def read(self, path: str, reader: str) -> asyncpg.Record:
        """The catalog as `reader` (JSON) reads it; 404 if it is missing or hidden."""
        row = await self.conn.fetchrow(queries.GET_CATALOG, path, reader)
        if row is None:
            raise NotFoundError(f"Catalog {path} does not exist.")
        return row

    async def subtree(self, path: str, reader: str, limit: int) -> list[str]:
        """The paths of the catalogs under it that `reader` reads (`queries.SUBTREE`); 404
        if it is missing or hidden."""
        row = await self.conn.fetchrow(queries.SUBTREE, path, reader, limit)
        if row is None or not row["found"]:
            raise NotFoundError(f"Catalog {path} does not exist.")
        return list(row["paths"])

    async def top_level(self, reader: str) -> list[asyncpg.Record]:
        return await self.conn.fetch(queries.TOP_LEVEL, reader)

    async def check_readable(self, path: str, reader: str) -> None:
        """404, as for a missing catalog, when `reader` may not read it."""
        if not await self.conn.fetchval(queries.READABLE, path, reader):
            raise NotFoundError(f"Catalog {path} does not exist.")

    async def lock(self, path: str, query: str = queries.LOCK_CATALOG) -> asyncpg.Record:
        """The catalog's row, locked until the end of the transaction (404 if absent)."""
        row = await self.conn.fetchrow(query, path)
        if row is None:
            raise NotFoundError(f"Catalog {path} does not exist.")
        return row

    async def check_targets(self, targets: Sequence[Target], path: str | None, reader: str,
                            children: Sequence[str] = ()) -> list[Target]:
        """The collection and item targets, once all exist (items: that `reader` reads);
        400 naming the ones that don't.

        A `child` link to a catalog is accepted only for an existing sub-catalog (so that a
        client may PUT back what it read): sub-catalogs are made by POST to their parent.
        """
        refs = [t for t in targets if t.kind != "catalog"]
        sub_catalogs = {f"{path}/{c}" for c in children}
        strange = [t.catalog_path for t in targets
                   if t.kind == "catalog" and t.catalog_path not in sub_catalogs]
        wanted_collections = sorted({t.collection for t in refs
                                     if t.kind == "collection" and t.collection})
        items = [t for t in refs if t.kind == "item"]
        found = {r["id"] for r in await self.conn.fetch(
            queries.EXISTING_COLLECTIONS, wanted_collections)} if wanted_collections else set()
        found_items = {(r["collection"], r["id"]) for r in await self.conn.fetch(
            queries.EXISTING_ITEMS, [t.collection for t in items], [t.item for t in items],
            reader)
        } if items else set()
        missing = [f"collection {c}" for c in wanted_collections if c not in found]
        missing += [f"item {t.collection}/{t.item}" for t in items
                    if (t.collection, t.item) not in found_items]
        missing += [f"catalog {p} (sub-catalogs are created by POST to their parent)"
                    for p in strange]
        if missing:
            raise HTTPException(status_code=400, detail="Links to what does not exist: "
                                + "; ".join(missing))
        return refs

    async def create(self, parent: asyncpg.Record | None, body: CatalogIn, owner: str,
                     project: str | None, refs: Sequence[Target],
                     extra_links: list[dict[str, Any]]) -> str:
        path = f"{parent['path']}/{body.id}" if parent else body.id
        try:
            pk = await self.conn.fetchval(
                queries.INSERT_CATALOG, parent["pk"] if parent else None, body.id, path,
                body.title, body.description, owner, project, _json(body.extra_fields()),
                _json(extra_links), body.visibility or "public")
        except asyncpg.UniqueViolationError as e:
            raise ConflictError(f"A catalog {body.id} already exists at {path}.") from e
        await self.replace_links(pk, refs)
        return path

    async def replace_links(self, pk: int, refs: Sequence[Target],
                            reader: str | None = None) -> None:
        """The catalog's collection and item links replaced by `refs`, as `reader` sees
        them (links to items it cannot read stay); None: `refs` added."""
        if reader is not None:
            await self.conn.execute(queries.DELETE_SEEN_LINKS, pk, reader)
        if refs:
            await self.conn.execute(queries.INSERT_LINKS, pk, [t.collection for t in refs],
                                    [t.item for t in refs], [t.title for t in refs])

    async def update_fields(self, pk: int, body: CatalogIn,
                            extra_links: list[dict[str, Any]] | None) -> None:
        await self.conn.execute(queries.UPDATE_CATALOG, pk, body.title, body.description,
                                _json(body.extra_fields()),
                                None if extra_links is None else _json(extra_links),
                                body.visibility)

    async def child_ids(self, pk: int) -> list[str]:
        return [r["id"] for r in await self.conn.fetch(queries.CHILD_IDS, pk)]

    async def has_children(self, pk: int) -> bool:
        return await self.conn.fetchval(queries.HAS_CHILDREN, pk)

    async def lock_subtree(self, pk: int, reader: str) -> list[asyncpg.Record]:
        """Path, owner and project of every catalog from `pk` down, locked, and whether
        `reader` reads it (`readable`, by its own visibility)."""
        return await self.conn.fetch(queries.LOCK_SUBTREE, pk, reader)

    async def delete_subtree(self, pk: int) -> list[str]:
        return sorted(r["path"] for r in await self.conn.fetch(queries.DELETE_SUBTREE, pk))
