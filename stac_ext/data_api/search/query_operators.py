"""The Query extension with every operator its spec lists.

Stock stac-fastapi-pgstac accepts `eq`, `neq`, `lt`, `lte`, `gt`, `gte` only (and pgstac
knows no `startsWith`), while the conformance class we claim also has `startsWith`,
`endsWith`, `contains` and `in`. A query using any of those is folded, whole, into a CQL2
clause (`like` with escaped wildcards, `in`) AND-ed with the request's filter, which pgstac
answers; other queries go to pgstac unchanged.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import attr
from pydantic import BaseModel
from stac_fastapi.pgstac.extensions import QueryExtension

from stac_ext.data_api.search.filters import Search, with_clauses


class Operator(StrEnum):
    eq = "eq"
    ne = "ne"
    neq = "neq"
    lt = "lt"
    lte = "lte"
    gt = "gt"
    gte = "gte"
    startsWith = "startsWith"
    endsWith = "endsWith"
    contains = "contains"
    in_ = "in"


class QueryPostRequest(BaseModel):
    query: dict[str, dict[Operator, Any]] | None = None


@attr.s
class FullQueryExtension(QueryExtension):
    POST = QueryPostRequest  # type: ignore[assignment]  # every operator, not stock's six


_FOLDED = {"startsWith", "endsWith", "contains", "in"}
_COMPARISONS = {"eq": "=", "ne": "<>", "neq": "<>", "lt": "<", "lte": "<=", "gt": ">",
                "gte": ">="}


def _like(value: Any) -> str:
    text = str(value)
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _clause(name: str, op: str, value: Any) -> dict[str, Any]:
    prop = {"property": name}
    if op == "startsWith":
        return {"op": "like", "args": [prop, f"{_like(value)}%"]}
    if op == "endsWith":
        return {"op": "like", "args": [prop, f"%{_like(value)}"]}
    if op == "contains":
        return {"op": "like", "args": [prop, f"%{_like(value)}%"]}
    if op == "in":
        return {"op": "in", "args": [prop, value if isinstance(value, list) else [value]]}
    return {"op": _COMPARISONS[op], "args": [prop, value]}


def fold_query(search: Search) -> Search:
    """The search request with a `query` using the operators pgstac lacks turned into CQL2."""
    query = getattr(search, "query", None)
    if not query or not any(str(op) in _FOLDED for ops in query.values()
                            if isinstance(ops, dict) for op in ops):
        return search
    clauses = [_clause(name, str(op), value) for name, ops in query.items()
               for op, value in (ops.items() if isinstance(ops, dict) else [("eq", ops)])]
    return with_clauses(search, clauses, query=None)
