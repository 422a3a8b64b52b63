"""The rules every item write follows, whoever writes (API, bulk API, publishing process).

`ItemRules.prepare` validates an item for a collection and sets what the server owns:
`properties.owner`, `created`, `updated`, and `collection`. `ItemRules.check` holds what
an item must be (id, geometry, hrefs, collection, extension schemas), also for bulk
loads. Configured by the stock settings `INVALID_ID_CHARS` and `VALIDATE_EXTENSIONS`, as
stock's own validation is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from stac_ext.data_api.geometries import geometry_problem, geometry_problems
from stac_ext.data_api.hrefs import href_problem
from stac_ext.platform.access import visibility_problem

if TYPE_CHECKING:
    from stac_ext.data_api.bodies import ItemIn

#: Characters of an item id: ids are keys of PostgreSQL indexes, whose entries are bounded
#: (2,704 bytes; 512 characters of up to 4 UTF-8 bytes stay below).
MAX_ID_LENGTH = 512
#: Who reads an item (`properties.visibility`): anyone; its owner (and administrators); the
#: members of its `properties.project` (and its owner). Absent: public.


class ItemRuleError(ValueError):
    """The item breaks a rule; the message says which (an HTTP 400 in the API)."""


class RuleSettings(Protocol):
    @property
    def invalid_id_chars(self) -> Sequence[str]: ...
    @property
    def validate_extensions(self) -> bool: ...


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stamp(item: dict[str, Any], owner: str | None, created: str | None = None
          ) -> dict[str, Any]:
    """Server-set properties: the owner, creation and update times."""
    now = utc_now()
    properties = item.setdefault("properties", {})
    properties["owner"] = owner
    properties["created"] = created or now
    properties["updated"] = now
    return item


@lru_cache(maxsize=8)
def _any_of(chars: str) -> re.Pattern[str]:
    return re.compile("[" + re.escape(chars) + "]")


@dataclass(frozen=True)
class ItemRules:
    invalid_id_chars: Sequence[str] = ()
    #: Validate each item against the schemas its `stac_extensions` name (fetched once
    #: per process by stac-pydantic, as stock does with `VALIDATE_EXTENSIONS=true`).
    validate_extensions: bool = False

    @classmethod
    def from_settings(cls, settings: RuleSettings) -> ItemRules:
        return cls(settings.invalid_id_chars, settings.validate_extensions)

    def prepare(self, item: dict[str, Any] | ItemIn, collection_id: str, owner: str | None,
                created: str | None = None, expected_id: str | None = None
                ) -> dict[str, Any]:
        """A validated, stamped copy of `item`, ready for pgstac."""
        # the API's models, imported here: `geocatalog load` checks items without them
        from pydantic import ValidationError

        from stac_ext.data_api.bodies import ItemIn
        from stac_ext.platform.service.errors import describe_errors

        try:
            model = item if isinstance(item, ItemIn) else ItemIn.model_validate(item)
        except ValidationError as e:
            raise ItemRuleError("Invalid item: "
                                + describe_errors(e.errors(), first_only=True)) from e
        body: dict[str, Any] = model.model_dump(mode="json")
        self.check(body, collection_id, expected_id)
        body["collection"] = collection_id
        return stamp(body, owner, created)

    def check(self, item: dict[str, Any], collection_id: str,
              expected_id: str | None = None) -> None:
        geometry = item.get("geometry")
        self._check(item, collection_id, expected_id,
                    None if geometry is None else geometry_problem(geometry))

    def problems(self, items: Sequence[dict[str, Any]]) -> list[str | None]:
        """What is wrong with each stored-as-is item (a bulk load: each names its
        collection), or None; the geometries checked together, for speed."""
        shapes = geometry_problems([i.get("geometry") for i in items])
        answers: list[str | None] = []
        for item, shape in zip(items, shapes, strict=True):
            try:
                self._check(item, str(item.get("collection")), None, shape)
            except ItemRuleError as e:
                answers.append(str(e))
            else:
                answers.append(None)
        return answers

    def _check(self, item: dict[str, Any], collection_id: str, expected_id: str | None,
               shape_problem: str | None) -> None:
        """The rules in order; `shape_problem`: what `geometry_problem` says of its geometry
        (computed alone or for a whole batch by the caller)."""
        item_id = str(item.get("id", ""))
        if len(item_id) > MAX_ID_LENGTH:
            raise ItemRuleError(f"Item id of {len(item_id)} characters: at most "
                                f"{MAX_ID_LENGTH}.")
        chars = self.invalid_id_chars
        if chars and _any_of("".join(chars)).search(item_id):
            raise ItemRuleError(f"Item id {item_id!r} may not contain any of "
                                f"{' '.join(chars)}")
        if item.get("geometry") is None:
            raise ItemRuleError(f"Item {item_id!r} has no geometry (required).")
        if shape_problem:
            raise ItemRuleError(f"Item {item_id!r} has an invalid geometry: {shape_problem}.")
        if problem := href_problem(item):
            raise ItemRuleError(f"Item {item_id!r}: {problem}")
        if item.get("collection") not in (None, collection_id):
            raise ItemRuleError(f"Item {item_id!r} names the collection "
                                f"{item['collection']!r}, but it is written to "
                                f"{collection_id!r}: an item belongs to exactly one "
                                "collection.")
        properties = item.get("properties") or {}
        if properties.get("datetime") is None and (properties.get("start_datetime") is None
                                                   or properties.get("end_datetime") is None):
            raise ItemRuleError(f"Item {item_id!r} has no time: properties.datetime, or "
                                "start_datetime and end_datetime, required.")
        if problem := visibility_problem(properties.get("visibility", "public"),
                                         properties.get("project"), "properties."):
            raise ItemRuleError(f"Item {item_id!r}: {problem}")
        if expected_id is not None and expected_id != item_id:
            raise ItemRuleError(f"Item id in the body ({item_id}) differs from the path "
                                f"({expected_id}).")
        if self.validate_extensions and item.get("stac_extensions"):
            from stac_pydantic.extensions import validate_extensions

            try:
                validate_extensions(item, reraise_exception=True)
            except Exception as e:  # a schema that fails to load fails the item too
                first = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise ItemRuleError(f"Item {item_id!r} fails the schemas of its "
                                    f"stac_extensions: {first}") from e


