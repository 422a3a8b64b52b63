"""Writes one file's items in one transaction: missing collections, items, catalog links."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from catalogs_ext import CatalogRefused, catalog_for_items, link_items
from stac_ext.data_api import queries
from stac_ext.data_api.item_rules import ItemRuleError, ItemRules
from stac_ext.data_api.item_writers import ItemWriter, locked_items
from stac_ext.platform.access import visibility_problem


class PublishError(RuntimeError):
    """The whole job cannot go on; the message is for the user."""


@dataclass
class Outcome:
    created: list[tuple[str, str]] = field(default_factory=list)  # (collection, item id)
    updated: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (item id, reason)
    collections_created: list[str] = field(default_factory=list)


def new_collection(collection_id: str, standard_name: str) -> dict[str, Any]:
    return {
        "type": "Collection", "stac_version": "1.0.0", "id": collection_id,
        "title": standard_name.replace("_", " ").capitalize(),
        "description": f"Data of the CF standard name `{standard_name}`, published by users.",
        "license": "other", "keywords": ["climate_forecast", standard_name],
        "extent": {"spatial": {"bbox": [[-180, -90, 180, 90]]},
                   "temporal": {"interval": [[None, None]]}},
        "links": [],
    }


class Writer:
    def __init__(self, conn: asyncpg.Connection, owner: str, may_create_collections: bool,
                 rules: ItemRules, project: str | None = None,
                 visibility: str = "public") -> None:
        self.conn = conn
        self.owner = owner
        # the job runs as its caller, whose rights it does not know: never an administrator
        self.writer = ItemWriter(owner)
        self.project = project
        self.may_create_collections = may_create_collections
        self.rules = rules
        # who reads the items: a job of a project may share them with its project only
        if visibility_problem(visibility, project) is not None:  # the schema bounds the rest
            raise PublishError("visibility `project` shares the items with the job's "
                               "project: run the job in a project (`metadata.project`).")
        self.shared: dict[str, str] = {"visibility": visibility}
        if visibility == "project" and project is not None:
            self.shared["project"] = project

    async def catalog_pk(self, path: str) -> int:
        try:
            return await catalog_for_items(self.conn, path, self.owner, self.project)
        except CatalogRefused as e:
            raise PublishError(str(e)) from None

    async def write(self, items: Sequence[tuple[str, dict[str, Any]]],
                    catalog: str | None) -> Outcome:
        """All of one dataset's items, or none of them."""
        outcome = Outcome()
        async with self.conn.transaction():
            prepared = []
            by_collection: dict[str, list[dict[str, Any]]] = {}
            for collection, item in items:
                by_collection.setdefault(collection, []).append(item)
            for collection, group in by_collection.items():  # one lookup per collection
                if not await self._collection_ready(collection, outcome):
                    outcome.skipped += [(item["id"], f"collection {collection} does not "
                                         "exist and your project may not create it")
                                        for item in group]
                    continue
                existing = await locked_items(self.conn, collection,
                                              [item["id"] for item in group])
                for item in group:
                    found = existing.get(item["id"])
                    if found and not self.writer.may_change(found.owner):
                        outcome.skipped.append((item["id"], "an item of another user has "
                                                "this id"))
                        continue
                    item = {**item, "properties": {**item["properties"], **self.shared}}
                    try:
                        prepared.append(self.rules.prepare(item, collection, self.owner,
                                                           found.created if found else None))
                    except ItemRuleError as e:
                        outcome.skipped.append((item["id"], str(e)))
                        continue
                    (outcome.updated if found else outcome.created).append(
                        (collection, item["id"]))
            if prepared:
                await self.conn.execute(queries.UPSERT_ITEMS, json.dumps(prepared))
            if catalog and prepared:
                await link_items(self.conn, await self.catalog_pk(catalog), [
                    (i["collection"], i["id"], i["properties"]["title"]) for i in prepared])
        return outcome

    async def _collection_ready(self, collection: str, outcome: Outcome) -> bool:
        if await self.conn.fetchval(queries.COLLECTION_EXISTS, collection):
            return True
        if not self.may_create_collections:
            return False
        standard_name = collection.split("-", 1)[1]
        await self.conn.execute(queries.CREATE_COLLECTION,
                                json.dumps(new_collection(collection, standard_name)))
        outcome.collections_created.append(collection)
        return True
