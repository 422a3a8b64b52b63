"""Who may write which item: the one rule of every item write (the API's single and bulk
writes, publish-dataset's writer; `geocatalog load` is an operator's, an administrator's
by definition). The ids are locked for the writing transaction first, so that no two
writers' check-and-write of one id interleave; then a new id is anyone's, a stored item is
replaced or deleted by its owner or an administrator only, and an item is shared with a
project (`visibility: project`) only by one of its members or an administrator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from asyncpg import Connection

from stac_ext.data_api import queries
from stac_ext.platform.access import Action, Caller, Resource, may, refusal


@dataclass(frozen=True)
class Stored:
    """What the rule needs of a stored item."""

    owner: str | None
    created: str | None


@dataclass(frozen=True)
class ItemWriter(Caller):
    """Who writes, as the access table takes a caller (`stac_ext.platform.access`)."""

    def may_change(self, owner: str | None) -> bool:
        """Whether they may replace or delete a stored item of `owner`."""
        return may(self, "change", Resource("item", owner=owner))

    def change_problem(self, owner: str | None) -> str | None:
        """Why they may not replace or delete a stored item of `owner`, or None."""
        return self._problem("change", Resource("item", owner=owner))

    def sharing_problem(self, properties: Mapping[str, Any]) -> str | None:
        """Why they may not write an item with these properties' visibility, or None."""
        if properties.get("visibility") != "project":
            return None
        return self._problem("share", Resource("item", project=properties.get("project")))

    def _problem(self, action: Action, resource: Resource) -> str | None:
        return None if may(self, action, resource) else refusal(self, action, resource)


async def lock_ids(conn: Connection, collection_id: str, item_ids: list[str]) -> None:
    """Serialise this transaction's check-and-write of these ids with every other one's."""
    await conn.execute(queries.LOCK_ITEM_IDS, collection_id, item_ids)


async def locked_items(conn: Connection, collection_id: str,
                       item_ids: list[str]) -> dict[str, Stored]:
    """The ids locked (`lock_ids`), and those stored already, by id."""
    await lock_ids(conn, collection_id, item_ids)
    rows = await conn.fetch(queries.ITEM_OWNERS, collection_id, item_ids)
    return {row["id"]: Stored(row["owner"], row["created"]) for row in rows}
