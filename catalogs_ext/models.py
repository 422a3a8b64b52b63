"""Request bodies of the catalogs tree."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CATALOG_ID = r"^[A-Za-z0-9_.-]+$"
#: A catalog's address: its ids from the top-level catalog down, `/`-separated.
CATALOG_PATH = r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$"

#: Fields the server owns: never stored from a body.
SERVER_FIELDS = {"id", "type", "title", "description", "links", "owner", "created",
                 "updated", "stac_version"}


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

    def extra_fields(self) -> dict[str, Any]:
        """STAC fields beyond the modelled ones (stac_extensions, keywords, ...)."""
        return {k: v for k, v in (self.model_extra or {}).items() if k not in SERVER_FIELDS}
