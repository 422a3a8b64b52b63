"""A POST search's filter in CQL2 text as well as JSON (`filter-lang: cql2-text`): stock's
POST model takes JSON only, and pystac-client posts the text it is given. The model takes
both (stock builds its request models from its extensions' fields, not their validators);
`fold_text_filter` turns the text into CQL2-JSON, as a GET filter is (`cql2_json`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field
from stac_fastapi.extensions.filter.filter import SearchFilterExtension
from stac_fastapi.extensions.filter.request import FilterExtensionPostRequest
from stac_fastapi.types.errors import InvalidQueryParameter

from stac_ext.data_api.search.filter_bounds import cql2_json
from stac_ext.data_api.search.filters import Search


class TextFilterPostRequest(FilterExtensionPostRequest):
    """Stock's POST filter, its text form taken too."""

    filter_expr: dict[str, Any] | str | None = Field(  # type: ignore[assignment]
        None, alias="filter", description="A CQL2 filter: JSON, or text with `filter-lang` "
        "`cql2-text`.")
    filter_lang: Literal["cql2-json", "cql2-text"] | None = Field(  # type: ignore[assignment]
        "cql2-json", alias="filter-lang", description="The CQL2 encoding of the 'filter' value.")


class TextSearchFilterExtension(SearchFilterExtension):
    """Stock's filter extension of `/search`, its POST body's filter in text too."""

    POST: type[BaseModel] = TextFilterPostRequest


# stock finds its extensions by class name (`extension_is_enabled`: the landing page's and
# collections' queryables links): this one answers to stock's
TextSearchFilterExtension.__name__ = SearchFilterExtension.__name__


def fold_text_filter(search: Search) -> Search:
    """The search with a text filter as CQL2-JSON; a 400 when the filter and its language
    disagree."""
    expression = getattr(search, "filter_expr", None)
    text = isinstance(expression, str)
    if expression is None or (not text and getattr(search, "filter_lang", None) != "cql2-text"):
        return search
    if not text or getattr(search, "filter_lang", None) != "cql2-text":
        raise InvalidQueryParameter("filter: CQL2 text goes with filter-lang cql2-text, a "
                                    "JSON object with cql2-json (the default).")
    return search.model_copy(update={"filter_expr": cql2_json(expression, "cql2-text"),
                                     "filter_lang": "cql2-json"})
