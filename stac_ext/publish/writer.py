"""Writes one file's items in one transaction: items, catalog links, and, for a known
standard name whose collection does not exist yet, the items held in its proposal (or the
collection made, where the job's project may)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from catalogs_ext import CatalogRefused, catalog_for_items, link_items
from process_api import JobFailed
from stac_ext.data_api import queries
from stac_ext.data_api.item_rules import ItemRuleError, ItemRules
from stac_ext.data_api.item_writers import ItemWriter, locked_items
from stac_ext.governance.collection_rule import with_vocabulary
from stac_ext.governance.names import look_up
from stac_ext.governance.proposals import Proposals
from stac_ext.governance.proposals import new_collection as proposed_collection
from stac_ext.platform.access import visibility_problem


class PublishError(JobFailed):
    """The whole job cannot go on; the message is for the user (the job's, as it is)."""


@dataclass
class Outcome:
    created: list[tuple[str, str]] = field(default_factory=list)  # (collection, item id)
    updated: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (item id, reason)
    collections_created: list[str] = field(default_factory=list)
    held: list[tuple[str, str, int]] = field(default_factory=list)  # (collection, id, proposal)


@dataclass(frozen=True)
class Place:
    """Where a collection's items go: `write` into `collection`, `hold` them in its
    proposal, or `skip` them (`reason`)."""

    action: str
    collection: str
    reason: str = ""


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
            prepared: list[dict[str, Any]] = []
            holding: dict[str, list[dict[str, Any]]] = {}
            by_collection: dict[str, list[dict[str, Any]]] = {}
            for collection, item in items:
                by_collection.setdefault(collection, []).append(item)
            for collection, group in by_collection.items():  # one lookup per collection
                place = await self._place(collection, outcome)
                if place.action == "skip":
                    outcome.skipped += [(item["id"], place.reason) for item in group]
                elif place.action == "hold":  # a collection not made yet: no item stored
                    holding[place.collection] = self._prepared(group, place.collection, {},
                                                               outcome, None)
                else:
                    existing = await locked_items(self.conn, place.collection,
                                                  [item["id"] for item in group])
                    prepared += self._prepared(group, place.collection, existing, outcome,
                                               outcome.updated)
            if prepared:
                await self.conn.execute(queries.UPSERT_ITEMS, json.dumps(prepared))
            catalog_pk = await self.catalog_pk(catalog) if catalog else None
            if catalog_pk is not None and prepared:
                await link_items(self.conn, catalog_pk, [
                    (i["collection"], i["id"], i["properties"]["title"]) for i in prepared])
            for collection, group in holding.items():
                await self._hold(collection, group, catalog_pk, outcome)
        return outcome

    def _prepared(self, group: list[dict[str, Any]], collection: str,
                  existing: dict[str, Any], outcome: Outcome,
                  updated: list[tuple[str, str]] | None) -> list[dict[str, Any]]:
        """The items made ready for `collection` by the item rules (those refused noted);
        `updated`: where a replaced one is noted (None: nothing is written yet)."""
        ready = []
        for item in group:
            found = existing.get(item["id"])
            if found and not self.writer.may_change(found.owner):
                outcome.skipped.append((item["id"], "an item of another user has this id"))
                continue
            item = {**item, "properties": {**item["properties"], **self.shared}}
            try:
                ready.append(self.rules.prepare(item, collection, self.owner,
                                                found.created if found else None))
            except ItemRuleError as e:
                outcome.skipped.append((item["id"], str(e)))
                continue
            if updated is not None:
                (updated if found else outcome.created).append((collection, item["id"]))
        return ready

    async def _hold(self, collection: str, items: list[dict[str, Any]],
                    catalog_pk: int | None, outcome: Outcome) -> None:
        if not items:
            return
        held = await Proposals(self.conn).hold(
            collection, items, self.owner,
            f"Items published by {self.owner} wait for this collection.", catalog_pk)
        outcome.held += [(collection, item_id, held.proposal) for item_id in held.held]
        outcome.skipped += [(item_id, "an item of another user held for this collection "
                             "has this id") for item_id in held.refused]

    async def _exists(self, collection: str) -> bool:
        return bool(await self.conn.fetchval(queries.COLLECTION_EXISTS, collection))

    async def _place(self, collection: str, outcome: Outcome) -> Place:
        """Where the items of a variable's collection go: the collection of its current
        name (an alias's successor) if it exists, else its own if it exists (one made
        before the name was retired, or without a vocabulary); else, for a known name,
        made (a project that may) or its proposal; an unknown name is skipped, saying
        the nearest names."""
        lookup = await look_up(self.conn, collection)
        target = lookup.variable.collection_id if lookup.variable is not None else collection
        if target != collection and await self._exists(target):
            return Place("write", target)
        if await self._exists(collection):
            return Place("write", collection)
        if lookup.variable is None:
            return Place("skip", collection, f"standard_name {lookup.why()}")
        if not self.may_create_collections:
            return Place("hold", target)
        await self.conn.execute(queries.CREATE_COLLECTION, json.dumps(with_vocabulary(
            proposed_collection(target, None), lookup.variable)))
        outcome.collections_created.append(target)
        return Place("write", target)
