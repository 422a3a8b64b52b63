"""Free text on items (`q`, the STAC API free-text extension) on `/search`, items pages and
a catalog's `_search`: stock's extension for the parameter, answered by the search index's
words (migration 007), and bounded here before the database parses it."""

from __future__ import annotations

from typing import Annotated, Any, cast

import attr
from pydantic import Field, PlainSerializer, field_validator
from stac_fastapi.api.models import create_post_request_model
from stac_fastapi.extensions.free_text import FreeTextConformanceClasses
from stac_fastapi.pgstac.extensions import FreeTextExtension
from stac_fastapi.pgstac.extensions.free_text import FreeTextExtensionPostRequest
from stac_fastapi.pgstac.types.search import PgstacSearch
from stac_fastapi.types.errors import InvalidQueryParameter
from stac_fastapi.types.extension import ApiExtension

#: Characters of `q`, all its terms together.
MAX_FREE_TEXT = 1_000


class WordsPostRequest(FreeTextExtensionPostRequest):
    """`q` in a body (a search's, an aggregation's): a string, read as the GET parameter
    is (comma-separated alternatives), or the extension's list of them."""

    # stock's, a string too; read as a list (`WordsSearch`), written for pgstac as stock's
    q: Annotated[str | list[str] | None, PlainSerializer(
        " OR ".join, return_type=str, when_used="json")] = Field(  # type: ignore[assignment]
        None, description="Free-text terms: a string of comma-separated alternatives, as "
        "the GET parameter, or a list of them.")


class WordsSearch(PgstacSearch):
    """The base of every search body: its `q` (the extension's field, added by the
    request model) a list of terms, given as a string or a list."""

    @field_validator("q", mode="before", check_fields=False)
    @classmethod
    def _terms(cls, q: Any) -> Any:
        if isinstance(q, str):
            return [term for term in q.split(",") if term] or None
        return q


def search_body(extensions: list[ApiExtension]) -> type[PgstacSearch]:
    """The model of a search's body with `extensions`' fields (stock builds it so, from
    a base without the terms' reading)."""
    return cast(type[PgstacSearch], create_post_request_model(extensions,
                                                              base_model=WordsSearch))


@attr.s
class WordsExtension(FreeTextExtension):
    """Stock's extension, its body's `q` a string too."""

    POST = WordsPostRequest


def search_free_text() -> FreeTextExtension:
    return WordsExtension(conformance_classes=[FreeTextConformanceClasses.SEARCH])


def items_free_text() -> FreeTextExtension:
    return WordsExtension(conformance_classes=[FreeTextConformanceClasses.ITEMS])


def bounded_words(q: list[str] | str | None) -> None:
    """A 400 for a `q` longer than `MAX_FREE_TEXT` characters."""
    terms = [q] if isinstance(q, str) else q or []
    if sum(len(term) for term in terms) > MAX_FREE_TEXT:
        raise InvalidQueryParameter(
            f"q: at most {MAX_FREE_TEXT} characters of search terms.")
