"""The rule of every collection write: its standard name is a name of its convention's
vocabulary (400 naming the nearest names, or the current name of an alias), and the
vocabulary's fields are the collection's: its title in words, the table's description
(what the creator adds follows it), and the canonical units as the CF extension's
`cf:parameter` (`[{"name": ..., "unit": ...}]`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg
from fastapi import HTTPException

from stac_ext.governance.names import Variable, look_up

#: The STAC CF extension, whose `cf:parameter` names a variable and its unit.
CF_EXTENSION = "https://stac-extensions.github.io/cf/v0.2.0/schema.json"


def vocabulary_description(variable: Variable) -> str:
    return variable.description or (f"`{variable.name}`, a standard name of "
                                    f"{variable.where()}.")


def with_vocabulary(collection: dict[str, Any], variable: Variable) -> dict[str, Any]:
    """The collection with the vocabulary's fields. A description of the creator's own
    follows the table's, after a blank line (a body that starts with the table's text, as
    one read back does, is kept as it is)."""
    table = vocabulary_description(variable)
    own = str(collection.get("description") or "").strip()
    description = own if own.startswith(table) else \
        table + (f"\n\n{own}" if own else "")
    parameter = {"name": variable.name, **({"unit": variable.units} if variable.units else {})}
    others = [p for p in collection.get("cf:parameter") or []
              if isinstance(p, dict) and p.get("name") != variable.name]
    extensions = list(collection.get("stac_extensions") or [])
    return {**collection, "title": variable.title, "description": description,
            "cf:parameter": [parameter, *others],
            "stac_extensions": extensions + ([CF_EXTENSION]
                                             if CF_EXTENSION not in extensions else [])}


@dataclass(frozen=True)
class CollectionRule:
    """What the data API runs on a collection's creation and replacement (its writer's
    connection, the collection as JSON, whether it exists): the collection to store, or a
    400. A collection of a name that a newer table made an alias stays as it is: it is
    kept, and may still be changed, but no new one is made for an alias."""

    #: A convention without a vocabulary here refuses its collections (else: unchecked).
    require_vocabulary: bool = True

    async def __call__(self, conn: asyncpg.Connection, collection: dict[str, Any],
                       existing: bool = False) -> dict[str, Any]:
        lookup = await look_up(conn, str(collection.get("id", "")))
        if existing and lookup.kind == "alias":
            return collection
        if problem := lookup.problem(self.require_vocabulary):
            raise HTTPException(status_code=400, detail=problem)
        if lookup.variable is None:  # a convention without a vocabulary, allowed
            return collection
        return with_vocabulary(collection, lookup.variable)
