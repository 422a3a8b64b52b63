"""Linking items into a catalog from outside the HTTP API (the publishing process), under
the tree's own rules: the catalog's owner, or a job of its project, links into it, in the
caller's transaction."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import quote

import asyncpg

from catalogs_ext import queries


class CatalogRefused(Exception):
    """The catalog does not exist or is not the caller's; the message is for the user."""


async def catalog_for_items(conn: asyncpg.Connection, path: str, username: str,
                            project: str | None = None) -> int:
    """The key of the catalog at `path`, held until the transaction ends; CatalogRefused
    when it does not exist, or is neither `username`'s nor of `project` (the project the
    caller acts in, whose membership was checked when the job was submitted)."""
    row = await conn.fetchrow(queries.LOCK_PARENT, path)
    # another's catalog is refused in the words of a missing one: a private catalog's
    # existence is not told
    if row is None or not may_link(row["owner"], row["project"], username, project):
        raise CatalogRefused(not_yours(path))
    return int(row["pk"])


def may_link(owner: str | None, catalog_project: str | None, username: str,
             project: str | None) -> bool:
    """Whether a job of `username`, acting in `project`, links items into a catalog of
    `owner` and `catalog_project`: its owner's job, or a job of its project."""
    return owner == username or (project is not None and catalog_project == project)


async def link_refusal(read: Callable[[str], Awaitable[Any]], path: str, username: str,
                       project: str | None) -> str | None:
    """Why a job of `username` (in `project`) may not link its results into the catalog at
    `path`, or None; `read`: the catalog's document at a path under the data API, as the
    user reads it (None: not a 200). Asked when the job is submitted or saved."""
    if {".", ".."} & set(path.split("/")):  # an address would resolve them; the writer not
        return not_yours(path)
    found = await read(f"catalogs/{quote(path, safe='/')}")
    if not isinstance(found, dict) or not may_link(found.get("owner"), found.get("project"),
                                                    username, project):
        return not_yours(path)
    return None


def not_yours(path: str) -> str:
    """The refusal of a catalog a job may not link into (or that does not exist)."""
    return (f"The target catalog {path} is not one of yours: items can only be linked "
            "into a catalog you own, or one of the job's project.")


async def link_items(conn: asyncpg.Connection, catalog_pk: int,
                     items: Sequence[tuple[str, str, str | None]]) -> None:
    """Add `rel: item` links (collection, item id, title); existing ones stay as they are."""
    if items:
        collections, ids, titles = (list(column) for column in zip(*items, strict=True))
        await conn.execute(queries.INSERT_LINKS, catalog_pk, collections, ids, titles)
