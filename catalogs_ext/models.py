"""Request bodies of the catalogs tree."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from stac_ext.platform.access import Visibility

#: Ids starting with `_` are reserved (`{path}/_search`); `.` and `..` are refused too.
_ID = r"[A-Za-z0-9.-][A-Za-z0-9_.-]*"
CATALOG_ID = f"^{_ID}$"
#: A catalog's address: its ids from the top-level catalog down, `/`-separated.
CATALOG_PATH = f"^{_ID}(/{_ID})*$"
DOT_IDS = {".", ".."}

#: Fields the server owns: never stored from a body.
SERVER_FIELDS = {"id", "type", "title", "description", "links", "owner", "project",
                 "visibility", "created", "updated", "stac_version", "conformsTo"}


class LinkIn(BaseModel):
    """A STAC link as a client sends it."""

    model_config = ConfigDict(extra="allow")

    href: str = Field(min_length=1, max_length=4096)
    rel: str = Field(min_length=1, max_length=256)
    title: str | None = Field(default=None, max_length=1024)
    type: str | None = None


class CatalogIn(BaseModel):
    """A STAC Catalog body for POST and PUT; other STAC fields are kept as they are."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(pattern=CATALOG_ID, max_length=256)
    type: Literal["Catalog"]
    description: str = Field(max_length=100_000)
    title: str | None = Field(default=None, max_length=1024)
    stac_version: str | None = None
    links: list[LinkIn] | None = None
    #: On creation, the project (a group of the caller) the catalog belongs to; a child
    #: inherits its parent's when absent. Never changed afterwards.
    project: str | None = Field(default=None, min_length=1, max_length=256)
    #: Who reads it: anyone (`public`, the default), its owner (`private`), or the members of
    #: its project (`project`); administrators read every catalog. Absent on PUT: unchanged.
    visibility: Visibility | None = None

    @field_validator("id")
    @classmethod
    def _not_dots(cls, value: str) -> str:
        if value in DOT_IDS:
            raise ValueError("`.` and `..` are not catalog ids")
        return value

    def extra_fields(self) -> dict[str, Any]:
        """STAC fields beyond the modelled ones (stac_extensions, keywords, ...)."""
        return {k: v for k, v in (self.model_extra or {}).items() if k not in SERVER_FIELDS}
