"""Free text on items (`q`, the STAC API free-text extension) on `/search`, items pages and
a catalog's `_search`: stock's extension for the parameter, answered by the search index's
words (migration 007), and bounded here before the database parses it."""

from __future__ import annotations

from stac_fastapi.extensions.free_text import FreeTextConformanceClasses
from stac_fastapi.pgstac.extensions import FreeTextExtension
from stac_fastapi.types.errors import InvalidQueryParameter

#: Characters of `q`, all its terms together.
MAX_FREE_TEXT = 1_000


def search_free_text() -> FreeTextExtension:
    return FreeTextExtension(conformance_classes=[FreeTextConformanceClasses.SEARCH])


def items_free_text() -> FreeTextExtension:
    return FreeTextExtension(conformance_classes=[FreeTextConformanceClasses.ITEMS])


def bounded_words(q: list[str] | str | None) -> None:
    """A 400 for a `q` longer than `MAX_FREE_TEXT` characters."""
    terms = [q] if isinstance(q, str) else q or []
    if sum(len(term) for term in terms) > MAX_FREE_TEXT:
        raise InvalidQueryParameter(
            f"q: at most {MAX_FREE_TEXT} characters of search terms.")
