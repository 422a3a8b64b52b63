"""Linking items into a catalog from outside the HTTP API (the publishing process), under
the tree's own rules: only the catalog's owner links into it, in the caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from catalogs_ext import queries


class CatalogRefused(Exception):
    """The catalog does not exist or is not the caller's; the message is for the user."""


async def catalog_for_items(conn: asyncpg.Connection, path: str, username: str) -> int:
    """The key of the catalog at `path`, held until the transaction ends; CatalogRefused
    when it does not exist or `username` does not own it."""
    row = await conn.fetchrow(queries.LOCK_PARENT, path)
    if row is None:
        raise CatalogRefused(f"The target catalog {path} does not exist.")
    if row["owner"] != username:
        raise CatalogRefused(f"The target catalog {path} is not yours: items can only be "
                             "linked into a catalog you own.")
    return int(row["pk"])


async def link_items(conn: asyncpg.Connection, catalog_pk: int,
                     items: Sequence[tuple[str, str, str | None]]) -> None:
    """Add `rel: item` links (collection, item id, title); existing ones stay as they are."""
    if items:
        collections, ids, titles = (list(column) for column in zip(*items, strict=True))
        await conn.execute(queries.INSERT_LINKS, catalog_pk, collections, ids, titles)
