"""Filter composition: clauses AND-ed onto a search request's CQL2-JSON filter."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

Search = TypeVar("Search", bound=BaseModel)


def with_clauses(search: Search, clauses: list[dict[str, Any]], **update: Any) -> Search:
    """A copy of the search request (with `update`) whose CQL2-JSON filter is its own
    filter, if any, AND the clauses."""
    if current := getattr(search, "filter_expr", None):
        clauses = [current, *clauses]
    combined = clauses[0] if len(clauses) == 1 else {"op": "and", "args": clauses}
    return search.model_copy(update={**update, "filter_expr": combined,
                                     "filter_lang": "cql2-json"})
