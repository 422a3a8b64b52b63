"""Proposals and the items held in them, over one connection: proposing, holding
publishing's items, and the decisions (each in the caller's transaction, the proposal
locked): accepting makes the collection (or its description) and releases the held items
as they asked to be read; rejecting keeps them for their owners, with the reason."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import asyncpg

from catalogs_ext import link_items
from stac_ext.data_api import queries as data_queries
from stac_ext.data_api.collection_ids import collection_id_problem
from stac_ext.data_api.item_writers import locked_items
from stac_ext.governance import queries
from stac_ext.governance.collection_rule import with_vocabulary
from stac_ext.governance.names import Lookup, look_up

logger = logging.getLogger("geocatalog.governance")

Kind = Literal["collection", "description"]
Status = Literal["open", "accepted", "rejected"]


class ProposalRefused(Exception):
    """A proposal or a decision that cannot be: the status it answers and why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def document(value: Any) -> Any:
    """A JSON column as Python: the API's pools decode it, a job's plain connection not."""
    return json.loads(value) if isinstance(value, str) else value


def new_collection(collection_id: str, description: str | None) -> dict[str, Any]:
    """A collection as a proposal makes it, before the vocabulary's fields."""
    return {
        "type": "Collection", "stac_version": "1.0.0", "id": collection_id,
        "description": description or "", "license": "other",
        "extent": {"spatial": {"bbox": [[-180, -90, 180, 90]]},
                   "temporal": {"interval": [[None, None]]}},
        "links": [],
    }


@dataclass(frozen=True)
class Held:
    """Items held in a proposal: its id, the ids held, those another user holds already."""

    proposal: int
    held: list[str]
    refused: list[str]


class Proposals:
    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def _collection_exists(self, collection_id: str) -> bool:
        return bool(await self.conn.fetchval(data_queries.COLLECTION_EXISTS, collection_id))

    async def propose(self, kind: Kind, collection_id: str, description: str | None,
                      comment: str | None, proposer: str) -> int:
        """A new open proposal's id; `ProposalRefused` (400, 404, 409) says why not."""
        if problem := collection_id_problem(collection_id):
            raise ProposalRefused(400, problem)
        if kind == "description":
            if not description:
                raise ProposalRefused(400, "A proposal of a description needs "
                                      "`description`: the text proposed.")
            if not await self._collection_exists(collection_id):
                raise ProposalRefused(404, f"Collection {collection_id} does not exist.")
        else:
            lookup = await look_up(self.conn, collection_id)
            if problem := lookup.problem():
                raise ProposalRefused(400, problem)
            if await self._collection_exists(collection_id):
                raise ProposalRefused(409, f"Collection {collection_id} exists already: "
                                      "propose a change of its description (`kind` "
                                      "`description`).")
            if (other := await self.conn.fetchval(queries.OPEN_FOR, collection_id)):
                raise ProposalRefused(409, f"Proposal {other} asks for the collection "
                                      f"{collection_id} already.")
        try:
            return int(await self.conn.fetchval(queries.INSERT_PROPOSAL, kind, collection_id,
                                                description, comment, proposer))
        except asyncpg.UniqueViolationError:  # another one, proposed at the same moment
            raise ProposalRefused(409, f"A proposal asks for the collection {collection_id} "
                                  "already.") from None

    async def hold(self, collection_id: str, items: Sequence[dict[str, Any]], owner: str,
                   comment: str, catalog_pk: int | None = None) -> Held:
        """Prepared items of `owner` held in the open proposal of their collection (made
        when there is none); an id another user holds already is refused."""
        proposal = int(await self.conn.fetchval(queries.OPEN_PROPOSAL, collection_id, owner,
                                                comment))
        held = [r["id"] for r in await self.conn.fetch(
            queries.HOLD_ITEMS, proposal, collection_id, owner, json.dumps(list(items)),
            catalog_pk)]
        refused = [i["id"] for i in items if i["id"] not in set(held)]
        return Held(proposal, held, refused)

    async def read(self, proposal_id: int, owner: str | None) -> asyncpg.Record | None:
        """The proposal with the held items of `owner` (None: everyone's)."""
        return await self.conn.fetchrow(queries.PROPOSAL, proposal_id, owner)

    async def list(self, owner: str | None, status: Status | None, user: str | None,
                   limit: int, offset: int) -> list[asyncpg.Record]:
        return list(await self.conn.fetch(queries.PROPOSALS, owner, status, user, limit,
                                          offset))

    async def _open(self, proposal_id: int) -> asyncpg.Record:
        row = await self.conn.fetchrow(queries.LOCK_PROPOSAL, proposal_id)
        if row is None:
            raise ProposalRefused(404, f"Proposal {proposal_id} does not exist.")
        if row["status"] != "open":
            raise ProposalRefused(409, f"Proposal {proposal_id} is {row['status']} "
                                  "already: a decision is final.")
        return row

    async def accept(self, proposal_id: int, by: str, reason: str) -> int:
        """Accept: the collection made (or its description changed) and the held items
        released; how many were released."""
        row = await self._open(proposal_id)
        collection_id = row["collection_id"]
        if row["kind"] == "description":
            await self._describe(collection_id, row["description"])
            released = 0
        else:
            lookup = await look_up(self.conn, collection_id)
            if problem := lookup.problem():  # the vocabulary changed since it was proposed
                raise ProposalRefused(409, problem + " Reject the proposal.")
            if not await self._collection_exists(collection_id):
                await self._make(collection_id, row["description"], lookup)
            released = await self._release(proposal_id, collection_id)
        await self.conn.execute(queries.DECIDE, proposal_id, "accepted", by, reason, released)
        logger.info("proposal %s accepted by %s: %s", proposal_id, by, reason)
        return released

    async def reject(self, proposal_id: int, by: str, reason: str) -> None:
        """Reject: recorded with the reason; held items stay their owners'."""
        await self._open(proposal_id)
        await self.conn.execute(queries.DECIDE, proposal_id, "rejected", by, reason, 0)
        logger.info("proposal %s rejected by %s: %s", proposal_id, by, reason)

    async def _make(self, collection_id: str, description: str | None,
                    lookup: Lookup) -> None:
        assert lookup.variable is not None
        collection = with_vocabulary(new_collection(collection_id, description),
                                     lookup.variable)
        await self.conn.execute(data_queries.CREATE_COLLECTION, json.dumps(collection))

    async def _describe(self, collection_id: str, description: str) -> None:
        stored = await self.conn.fetchval(data_queries.GET_COLLECTION, collection_id)
        if stored is None:
            raise ProposalRefused(409, f"Collection {collection_id} no longer exists: "
                                  "reject the proposal.")
        collection = {**document(stored), "description": description}
        lookup = await look_up(self.conn, collection_id)
        if lookup.kind == "name" and lookup.variable is not None:
            collection = with_vocabulary(collection, lookup.variable)
        collection.pop("links", None)  # made on the way out, as for any collection read
        await self.conn.execute(data_queries.UPDATE_COLLECTION, json.dumps(collection))

    async def _release(self, proposal_id: int, collection_id: str) -> int:
        """The held items into the catalog (an id that another user's item holds there
        stays held), linked into their catalogs; how many."""
        held = await self.conn.fetch(queries.HELD_OF, proposal_id)
        if not held:
            return 0
        stored = await locked_items(self.conn, collection_id, [h["id"] for h in held])
        free = [h for h in held if h["id"] not in stored
                or stored[h["id"]].owner == h["owner"]]
        if not free:
            return 0
        await self.conn.execute(data_queries.UPSERT_ITEMS,
                                json.dumps([document(h["content"]) for h in free]))
        by_catalog: dict[int, list[tuple[str, str, str | None]]] = {}
        for h in free:
            if h["catalog_pk"] is not None:
                title = document(h["content"]).get("properties", {}).get("title")
                by_catalog.setdefault(h["catalog_pk"], []).append(
                    (collection_id, h["id"], title))
        for catalog_pk, links in by_catalog.items():
            await link_items(self.conn, catalog_pk, links)
        await self.conn.execute(queries.RELEASE_HELD, proposal_id, [h["id"] for h in free])
        return len(free)
