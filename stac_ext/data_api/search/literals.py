"""CQL2 literals pgstac does not read, written as those it does: a `DATE` as the instant it
starts (midnight UTC, as pgstac's temporal operators read a date), a `BBOX` as its
polygon, `TRUE` and `FALSE` as conditions. pgstac compared a date as text (every
comparison false: no items, no error), refused a box as no geometry, and a boolean in
`and` as text."""

from __future__ import annotations

from typing import Any

from stac_ext.data_api.search.antimeridian import polygon

#: CQL2's FALSE and TRUE as pgstac reads a condition (it reads a bare boolean as text):
#: no item has no id.
NOTHING: dict[str, Any] = {"op": "isNull", "args": [{"property": "id"}]}
EVERYTHING: dict[str, Any] = {"op": "not", "args": [NOTHING]}
_LOGICAL = {"and", "or", "not"}


def readable_literals(expression: Any) -> Any:
    """The CQL2-JSON expression with its `{"date": ...}` and `{"bbox": [...]}` literals
    rewritten, and the booleans among `and`, `or` and `not` conditions (the expression's
    depth is bounded before)."""
    if isinstance(expression, list):
        return [readable_literals(part) for part in expression]
    if not isinstance(expression, dict):
        return expression
    if str(expression.get("op")).lower() in _LOGICAL and \
            isinstance(args := expression.get("args"), list):
        return {**expression, "args": [
            (EVERYTHING if part else NOTHING) if isinstance(part, bool)
            else readable_literals(part) for part in args]}
    if len(expression) == 1 and isinstance(expression.get("date"), str):
        return {"timestamp": f"{expression['date']}T00:00:00Z"}
    box = expression.get("bbox") if len(expression) == 1 else None
    if isinstance(box, list) and len(box) in (4, 6) and \
            all(isinstance(v, int | float) for v in box):
        return polygon(box)
    return {key: readable_literals(value) for key, value in expression.items()}
