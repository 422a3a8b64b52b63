"""A search's `filter` parameter, bounded before any parser sees it, as CQL2-JSON.

cql2's text parser recurses once per nesting level: a few thousand parentheses (or `NOT`s,
or signs) overflow its stack and kill the process. Its `validate()`, which stock runs on
every GET filter, checks a JSON Schema whose cost grows steeply with nesting (seconds and
gigabytes for a few dozen nested calls) and is high even for a plain `owner = 'a'`
(docs/performance.md). So a filter is
bounded lexically (length, nesting), parsed (text) or decoded (JSON), and its root checked
to be a boolean expression; pgstac, which answers POST filters without cql2, judges the
rest, as it does for them (a 400 naming what it cannot use).

Every filter, a POST body's as a GET's once turned into CQL2-JSON, is then bounded by its
size and its operations (`bounded_json`): the database's work grows with its
terms (an OR of thousands of LIKEs takes seconds of it per request).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from cql2 import Expr
from stac_fastapi.types.errors import InvalidQueryParameter

#: Characters of a GET `filter` (a longer one goes in a POST body, as CQL2-JSON).
MAX_FILTER_LENGTH = 16_384
#: Nesting of a filter: brackets of any kind, plus runs of prefix operators (`NOT`, signs),
#: which nest as deep as brackets do.
MAX_FILTER_DEPTH = 64

#: Characters of a filter as CQL2-JSON (a POST body's: several times a GET filter's text).
MAX_FILTER_JSON = 131_072
#: Operations (`op`: comparisons, `and`, `or`, functions...) of one filter.
MAX_FILTER_OPERATIONS = 2_048

# strings (CQL2 text: '...' with '' inside; JSON and quoted identifiers: "..." with \),
# words, and the characters that open, close or prefix
_TOKENS = re.compile(r"""'(?:[^']|'')*'?|"(?:[^"\\]|\\.)*"?|[A-Za-z_][A-Za-z0-9_:.]*"""
                     r"""|[0-9][0-9.eE]*|[(\[{]|[)\]}]|[-+]|\S""", re.DOTALL)
_OPEN, _CLOSE, _PREFIX = frozenset("([{"), frozenset(")]}"), frozenset("-+")


def nesting(text: str) -> int:
    """How deep `text` nests: brackets, plus the longest run of prefix operators."""
    deepest = depth = run = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in _OPEN:
            depth += 1
            run = 0
        elif token in _CLOSE:
            depth -= 1
            run = 0
        elif token in _PREFIX or token.upper() == "NOT":
            run += 1
        else:
            run = 0
        deepest = max(deepest, depth + run)
    return deepest


def bounded(text: str, name: str = "filter") -> str:
    """The text of a filter (or of another JSON parameter, `name`), if within the limits;
    else a 400 naming the limit."""
    if len(text) > MAX_FILTER_LENGTH:
        raise InvalidQueryParameter(
            f"{name}: at most {MAX_FILTER_LENGTH} characters (this one has {len(text)}); "
            f"send a longer {name} in a POST /search body.")
    if nesting(text) > MAX_FILTER_DEPTH:
        raise InvalidQueryParameter(
            f"{name}: nests deeper than {MAX_FILTER_DEPTH} levels (parentheses, brackets, "
            "NOT and signs count).")
    return text


def cql2_json(text: str, lang: str | None) -> dict[str, Any] | bool:
    """A GET filter (`cql2-text`, else `cql2-json`) as CQL2-JSON; 400 when it is none."""
    bounded(text)
    try:
        parsed = Expr(text).to_json() if lang == "cql2-text" else orjson.loads(text)
    except Exception as e:  # cql2 raises bare Exceptions, orjson its JSONDecodeError
        raise InvalidQueryParameter(f"Invalid filter: {e}") from e
    if isinstance(parsed, bool) or (isinstance(parsed, dict) and isinstance(
            parsed.get("op"), str) and isinstance(parsed.get("args", []), list)):
        return parsed
    raise InvalidQueryParameter("Invalid filter: it must be a boolean expression (an "
                                "operation such as owner = 'alice'), not a value or a "
                                "property alone.")


def bounded_json(value: Any) -> None:
    """A CQL2-JSON filter within the limits (its size, its operations); else a 400 naming
    the limit. (Its nesting is bounded before: a GET filter's by `bounded`, a POST body's
    with the body.)"""
    try:
        size = len(orjson.dumps(value))
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: JSON all the same (a string
        size = len(json.dumps(value))  # that is no Unicode text was refused with its body)
    if size > MAX_FILTER_JSON:
        raise InvalidQueryParameter(f"filter: at most {MAX_FILTER_JSON} characters as "
                                    f"CQL2-JSON (this one has {size}).")
    operations = 0
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if "op" in node:
                operations += 1
                _takes_its_arguments(node)
            pending += node.values()
        elif isinstance(node, list):
            pending += node
    if operations > MAX_FILTER_OPERATIONS:
        raise InvalidQueryParameter(f"filter: at most {MAX_FILTER_OPERATIONS} operations "
                                    f"(this one has {operations}); split the search.")


#: Operations that take exactly so many arguments (pgstac formats them into SQL: one short
#: was its "too few arguments for format()").
_ARITY = {**dict.fromkeys(("=", "<>", "<", ">", "<=", ">=", "like", "in"), 2),
          "between": 3, "not": 1, "isnull": 1,
          **dict.fromkeys(("s_intersects", "s_equals", "s_disjoint", "s_touches", "s_within",
                           "s_overlaps", "s_crosses", "s_contains", "t_after", "t_before",
                           "t_contains", "t_disjoint", "t_during", "t_equals",
                           "t_finishedby", "t_finishes", "t_intersects", "t_meets",
                           "t_metby", "t_overlappedby", "t_overlaps", "t_startedby",
                           "t_starts", "a_equals", "a_contains", "a_containedby",
                           "a_overlaps"), 2)}


def _takes_its_arguments(operation: dict[str, Any]) -> None:
    op, args = str(operation.get("op")).lower(), operation.get("args")
    wanted = _ARITY.get(op)
    if wanted is not None and (not isinstance(args, list) or len(args) != wanted):
        given = len(args) if isinstance(args, list) else 0
        raise InvalidQueryParameter(f"Invalid filter: {op} takes {wanted} argument"
                                    f"{'s' if wanted > 1 else ''}, not {given}.")
