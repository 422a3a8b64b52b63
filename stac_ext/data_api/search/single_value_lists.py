"""POST /search: a single string where the spec has an array of ids is read as that array.

`{"collections": "a"}` means `{"collections": ["a"]}` to clients such as stac-api-validator;
stock answered it with a 400. A request-model mixin (an ApiExtension without routes), so
the stock model keeps every other rule.
"""

from __future__ import annotations

from typing import Annotated, Any

import attr
from fastapi import FastAPI
from pydantic import BaseModel, BeforeValidator, Field
from stac_fastapi.types.extension import ApiExtension
from stac_fastapi.types.search import APIRequest


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


Listed = Annotated[list[str] | None, BeforeValidator(_listed)]


class SingleValueLists(BaseModel):
    # field-level validators: stock builds the search model from the extensions' fields
    # (with their metadata), not from their model validators
    collections: Listed = Field(default=None, description="Collection ids")
    ids: Listed = Field(default=None, description="Item ids")


@attr.s
class SingleValueListsExtension(ApiExtension):
    GET = APIRequest
    POST = SingleValueLists
    conformance_classes: list[str] = attr.ib(factory=list)
    schema_href: str | None = attr.ib(default=None)

    def register(self, app: FastAPI) -> None:
        return None
