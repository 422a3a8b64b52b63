"""Writes: stock stac-fastapi-pgstac transactions with our rules.

Items: the minimal item (no links, no bbox) is accepted; the server sets
`properties.owner` (from the token), `created` and `updated`; only the owner or an admin
changes or deletes an item; POST answers 201 + `Location`, DELETE 204. Collections: admin
only, ids shaped `<convention>-<standard_name>`, no delete of a collection with items
without `_force`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

import attr
import jsonpatch
import jsonpointer
from asyncpg import Connection, PostgresError
from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from json_merge_patch import merge
from pydantic import ValidationError
from stac_fastapi.extensions.bulk_transactions import BulkTransactionMethod, Items
from stac_fastapi.extensions.transaction.request import (
    PartialItem,
    PatchOperation,
)
from stac_fastapi.pgstac.db import dbfunc
from stac_fastapi.pgstac.transactions import BulkTransactionsClient as StockBulkClient
from stac_fastapi.pgstac.transactions import TransactionsClient as StockTransactionsClient
from stac_fastapi.types.errors import ConflictError, NotFoundError, StacApiError
from stac_fastapi.types.requests import get_base_url
from stac_pydantic import Collection
from stac_pydantic.shared import MimeTypes
from starlette.responses import JSONResponse, Response

from stac_ext.data_api import queries
from stac_ext.data_api.bodies import ItemCollectionIn, ItemIn
from stac_ext.data_api.collection_ids import collection_id_problem
from stac_ext.data_api.encoding import json_bytes
from stac_ext.data_api.hrefs import href_problem
from stac_ext.data_api.item_links import Decorator, ItemLinker
from stac_ext.data_api.item_reads import read_item
from stac_ext.data_api.item_rules import ItemRuleError, ItemRules
from stac_ext.data_api.item_writers import ItemWriter, Stored, lock_ids, locked_items
from stac_ext.data_api.policy import DataPolicy
from stac_ext.data_api.urls import item_path
from stac_ext.platform.database.group_commit import GroupCommit
from stac_ext.platform.service.errors import Forbidden, describe_errors


def check_collection_id(collection_id: str) -> None:
    if problem := collection_id_problem(collection_id):
        raise HTTPException(status_code=400, detail=problem)


def rules(request: Request) -> ItemRules:
    return ItemRules.from_settings(request.app.state.settings)


def apply_patch(document: dict[str, Any], patch: Any) -> dict[str, Any]:
    """RFC 6902 operations or an RFC 7396 merge patch applied to a copy; 400 if it cannot."""
    try:
        if isinstance(patch, list):
            return jsonpatch.JsonPatch([op.model_dump(mode="json") for op in patch]).apply(
                document)
        return merge(document, patch.model_dump(mode="json"))
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as e:
        raise HTTPException(status_code=400, detail=f"The patch cannot be applied: {e}") from e


def _storable(collection: Collection) -> Collection:
    """stac_version is required in a stored STAC object: set it when a client left it out;
    and its hrefs are ones a browser may follow (`hrefs`)."""
    if problem := href_problem(collection.model_dump(mode="json")):
        raise HTTPException(status_code=400, detail=f"Collection {collection.id}: {problem}")
    if "stac_version" not in collection.model_fields_set:
        collection.stac_version = collection.stac_version  # marks the default as set
    return collection


async def require_collection(request: Request, collection_id: str) -> None:
    # the writer's view (a replica may not have the collection created a moment ago)
    async with request.app.state.get_connection(request, "w") as conn:
        if not await conn.fetchval(queries.COLLECTION_EXISTS, collection_id):
            raise NotFoundError(f"Collection {collection_id} does not exist.")


async def stored_item(conn: Connection, collection_id: str, item_id: str,
                      reader: dict[str, Any] | None) -> dict[str, Any]:
    """The item as stored, if `reader` reads it: a write to an item hidden from its caller
    is a 404, as to a missing one (never a 403 saying it exists)."""
    item = await read_item(conn, collection_id, item_id, reader)
    if item is None:
        raise NotFoundError(f"Item {item_id} in Collection {collection_id} does not exist.")
    return item


#: The rule of collection writes beside the id's shape, handed in by the composition root
#: (the conventions' vocabularies): (the writer's connection, the collection as JSON,
#: whether it exists already) -> the collection to store; it raises the 400 itself.
CollectionRule = Callable[[Connection, dict[str, Any], bool], Awaitable[dict[str, Any]]]


#: What a write raises when the database refuses an item (not when it is away): items
#: posted together are then written one by one, each for its own answer.
REFUSALS = (StacApiError, PostgresError)


async def _create_items(request: Request, collection_id: str,
                        features: list[dict[str, Any]]) -> int:
    """Create items in one statement (their ids locked, the collection checked): 1 when
    written, 0 when there is no such collection."""
    async with request.app.state.get_connection(request, "w") as conn:
        return int(await conn.fetchval(queries.CREATE_ITEMS, collection_id,
                                       [f["id"] for f in features],
                                       json_bytes(features).decode()))


async def _create_posted(request: Request, collection_id: str,
                         features: list[dict[str, Any]]) -> list[int]:
    """Single posts gathered: each one's answer (one transaction for all)."""
    return [await _create_items(request, collection_id, features)] * len(features)


async def _clash(request: Request, collection_id: str, features: list[dict[str, Any]]
                 ) -> str:
    """Which of the items posted exist already (none by now: pgstac's words)."""
    ids = [f["id"] for f in features]
    async with request.app.state.get_connection(request, "w") as conn:  # as it was written
        found = {r["id"] for r in await conn.fetch(queries.ITEM_OWNERS, collection_id, ids)}
    existing = [json.dumps(i) for i in ids if i in found]
    if not existing:
        return "An object with this id exists already."
    if len(ids) == 1:
        return (f"An item {existing[0]} exists already in collection {collection_id}: "
                "replace it (PUT), or give another id.")
    more = f" and {len(existing) - 10} more" if len(existing) > 10 else ""
    return (f"Items exist already in collection {collection_id}: "
            f"{', '.join(existing[:10])}{more}; none of the {len(ids)} was written.")


def _repeated_id(features: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Items posted together each with an id of its own: else the error of the one that
    repeats another's (the database's refusal would say the id exists already, which it
    does not)."""
    first: dict[str, int] = {}
    for n, feature in enumerate(features):
        if (seen := first.setdefault(feature["id"], n)) != n:
            return {"loc": ("body", "FeatureCollection", "features", n, "id"),
                    "msg": f"{json.dumps(feature['id'])} is features.{seen}'s id too; items "
                           "posted together have ids of their own"}
    return None


@attr.s
class TransactionsClient(StockTransactionsClient):
    # `type: ignore[override]` below: our bodies (minimal items: `ItemIn`) and answers
    # (201 + Location, 204) where stock's signatures name stac-pydantic models and dicts.
    policy: DataPolicy = attr.ib(kw_only=True)
    decorator: Decorator | None = attr.ib(kw_only=True)
    #: SQL run with ($1 collection, $2 item) in the item delete's transaction, e.g. to
    #: remove catalog links to the item.
    on_item_delete: list[str] = attr.ib(kw_only=True, factory=list)
    #: single-item POSTs to one collection, written together while others are in flight
    posts: GroupCommit[dict[str, Any], int] = attr.ib(
        kw_only=True, factory=lambda: GroupCommit(refusals=REFUSALS))
    collection_rule: CollectionRule | None = attr.ib(kw_only=True, default=None)

    async def _ruled(self, request: Request, collection: Collection, existing: bool
                     ) -> Collection:
        """The collection as the collection rule has it (the vocabulary's fields)."""
        if self.collection_rule is None:
            return collection
        async with request.app.state.get_connection(request, "w") as conn:
            ruled = await self.collection_rule(conn, collection.model_dump(mode="json"),
                                               existing)
        return Collection.model_validate(ruled)

    def _prepare(self, request: Request, item: ItemIn, collection_id: str, owner: str,
                 created: str | None = None, expected_id: str | None = None) -> dict[str, Any]:
        try:
            body = rules(request).prepare(item, collection_id, owner, created, expected_id)
        except ItemRuleError as e:
            raise HTTPException(status_code=400, detail=str(e)) from e
        if problem := self._writer(request).sharing_problem(body["properties"]):
            raise Forbidden(problem)
        return body

    def _writer(self, request: Request) -> ItemWriter:
        return self.policy.writer(self.policy.principal(request))

    def _require_change(self, request: Request, owner: str | None) -> None:
        if problem := self._writer(request).change_problem(owner):
            raise Forbidden(problem)

    def _reader(self, request: Request) -> dict[str, Any] | None:
        return self.policy.reader(self.policy.principal(request))

    async def _respond_item(self, request: Request, item: dict[str, Any]) -> dict[str, Any]:
        base_url = get_base_url(request)
        item["links"] = ItemLinker(base_url).links(item["collection"], item["id"],
                                                   item.get("links"))
        return item if self.decorator is None else self.decorator.decorate(item, base_url)

    async def create_item(  # type: ignore[override]
        self, collection_id: str, item: ItemIn | ItemCollectionIn, request: Request, **kwargs: Any
    ) -> Response:
        if item is None:  # no body at all (`null` is refused before: not an object)
            raise HTTPException(status_code=400, detail=(
                "The request body is empty: it must be a JSON object (an item, or a "
                "FeatureCollection of items to create at once)."))
        owner = self.policy.principal(request).username
        many = isinstance(item, ItemCollectionIn)
        posted = item.features if isinstance(item, ItemCollectionIn) else [item]
        features = [self._prepare(request, f, collection_id, owner) for f in posted]
        if problem := _repeated_id(features):
            raise RequestValidationError([problem])
        try:
            written = (await _create_items(request, collection_id, features) if many
                       else await self.posts.add(
                           collection_id, features[0],
                           functools.partial(_create_posted, request, collection_id)))
        except ConflictError:  # pgstac's says no more
            raise ConflictError(await _clash(request, collection_id, features)) from None
        if not written:
            raise NotFoundError(f"Collection {collection_id} does not exist.")
        if many:
            return JSONResponse({"created": len(features)}, status_code=201)
        body = features[0]
        return JSONResponse(
            await self._respond_item(request, body), status_code=201,
            media_type=MimeTypes.geojson.value,
            headers={"Location": get_base_url(request) + item_path(collection_id, body["id"])},
        )

    async def _replace_item(self, request: Request, collection_id: str, item_id: str,
                            change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        """PUT and PATCH: the owner (or an admin) replaces the item by `change(stored)`,
        under the same rules as a POST; the owner and `created` stay."""
        async with request.app.state.get_connection(request, "w") as conn, conn.transaction():
            await lock_ids(conn, collection_id, [item_id])
            existing = await stored_item(conn, collection_id, item_id, self._reader(request))
            owner = existing["properties"].get("owner")
            self._require_change(request, owner)
            existing.pop("links", None)  # generated on the way out, not stored
            body = self._prepare(request, change(existing), collection_id, owner,
                                 existing["properties"].get("created"), expected_id=item_id)
            await conn.execute(queries.UPDATE_ITEM, json_bytes(body).decode())
        return await self._respond_item(request, body)

    async def update_item(  # type: ignore[override]
        self, request: Request, collection_id: str, item_id: str, item: ItemIn, **kwargs: Any
    ) -> dict[str, Any]:
        return await self._replace_item(request, collection_id, item_id, lambda _: item)

    async def patch_item(  # type: ignore[override]
        self, collection_id: str, item_id: str, patch: PartialItem | list[PatchOperation],
        request: Request, **kwargs: Any,
    ) -> dict[str, Any]:
        return await self._replace_item(request, collection_id, item_id,
                                        lambda stored: apply_patch(stored, patch))

    async def delete_item(  # type: ignore[override]
        self, item_id: str, collection_id: str, request: Request, **kwargs: Any
    ) -> Response:
        async with request.app.state.get_connection(request, "w") as conn, conn.transaction():
            await lock_ids(conn, collection_id, [item_id])
            existing = await stored_item(conn, collection_id, item_id, self._reader(request))
            self._require_change(request, existing["properties"].get("owner"))
            # delete first: it waits for any transaction holding the item (a catalog
            # linking it), whose links the statements below then see and remove
            await conn.fetchval(queries.DELETE_ITEM, collection_id, item_id)
            for statement in self.on_item_delete:
                await conn.execute(statement, collection_id, item_id)
        return Response(status_code=204)

    async def create_collection(  # type: ignore[override]
        self, collection: Collection, request: Request, **kwargs: Any
    ) -> Any:
        self.policy.require_collection_change(request)
        check_collection_id(collection.id)
        collection = await self._ruled(request, _storable(collection), existing=False)
        return await super().create_collection(collection, request, **kwargs)

    async def update_collection(  # type: ignore[override]
        self, collection_id: str, collection: Collection, request: Request, **kwargs: Any
    ) -> Any:
        self.policy.require_collection_change(request)
        if collection is None:
            raise HTTPException(status_code=400, detail="A collection body is required.")
        if collection.id != collection_id:
            raise HTTPException(status_code=400, detail=f"Collection id in the body "
                                f"({collection.id}) differs from the path ({collection_id}).")
        await require_collection(request, collection_id)
        collection = await self._ruled(request, _storable(collection), existing=True)
        return await super().update_collection(collection, request, **kwargs)

    async def patch_collection(  # type: ignore[override]
        self, collection_id: str, patch: Any, request: Request, **kwargs: Any
    ) -> Any:
        return await self.update_collection(
            collection_id, await self._patched(request, collection_id, patch), request)

    async def _patched(self, request: Request, collection_id: str, patch: Any) -> Collection:
        """The stored collection with `patch` applied, for who may change it; a patch may
        not make the collection invalid, nor rename it (400)."""
        self.policy.require_collection_change(request)
        async with request.app.state.get_connection(request, "w") as conn:
            existing = await conn.fetchval(queries.GET_COLLECTION, collection_id)
        if existing is None:
            raise NotFoundError(f"Collection {collection_id} does not exist.")
        try:
            return Collection.model_validate(apply_patch(existing, patch))
        except ValidationError as e:
            raise HTTPException(status_code=400, detail="The patched collection is invalid: "
                                + describe_errors(e.errors(), first_only=True)) from e

    async def delete_collection(  # type: ignore[override]
        self, collection_id: str, request: Request, force: bool = False, **kwargs: Any
    ) -> Response:
        self.policy.require_collection_change(request)
        await require_collection(request, collection_id)
        if not force:
            async with request.app.state.get_connection(request, "w") as conn:
                if await conn.fetchval(queries.COLLECTION_HAS_ITEMS, collection_id):
                    raise ConflictError(f"Collection {collection_id} still holds items: "
                                        "delete them first, or repeat with `_force=true`.")
        return await super().delete_collection(collection_id, request, **kwargs)


@attr.s
class BulkTransactionsClient(StockBulkClient):
    """Bulk item writes under the same rules as single ones."""

    policy: DataPolicy = attr.ib(kw_only=True)

    async def bulk_item_insert(self, items: Items, **kwargs: Any) -> Any:
        request: Request = kwargs["request"]
        writer = self.policy.writer(self.policy.principal(request))
        collection_id = request.path_params["collection_id"]
        await require_collection(request, collection_id)
        async with request.app.state.get_connection(request, "w") as conn, conn.transaction():
            existing: dict[str, Stored] = {}
            if items.method == BulkTransactionMethod.UPSERT:
                existing = await locked_items(conn, collection_id, list(items.items))
            else:  # an id stored already makes the insert fail whole, whoever owns it
                await lock_ids(conn, collection_id, list(items.items))
            accepted, refused = self._sort(items, existing, writer, rules(request),
                                           collection_id)
            if accepted:  # pgstac's functions, without its staging table (as POSTs)
                function = ("geocatalog.upsert_items"
                            if items.method == BulkTransactionMethod.UPSERT
                            else "geocatalog.create_items")
                await dbfunc(conn, function, accepted)
        return {"received": len(items.items), "success": len(accepted), "skipped": 0,
                "errors": refused}

    @staticmethod
    def _sort(items: Items, existing: dict[str, Stored], writer: ItemWriter,
              item_rules: ItemRules, collection_id: str
              ) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
        """(prepared items to write, refused ids with why)."""
        refused: list[dict[str, str]] = []
        accepted: list[dict[str, Any]] = []
        for item_id, raw in items.items.items():
            found = existing.get(item_id)
            if found and (problem := writer.change_problem(found.owner)):
                refused.append({"id": item_id, "msg": problem})
                continue
            try:  # the same rules as a single POST (minimal items, derived bbox)
                prepared = item_rules.prepare(
                    raw, collection_id, found.owner if found else writer.username,
                    found.created if found else None, expected_id=item_id)
            except ItemRuleError as e:
                refused.append({"id": item_id, "msg": str(e)})
                continue
            if problem := writer.sharing_problem(prepared["properties"]):
                refused.append({"id": item_id, "msg": problem})
            else:
                accepted.append(prepared)
        return accepted, refused
