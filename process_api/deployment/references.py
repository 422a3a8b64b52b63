"""A package's parameter references, checked when it is deployed rather than when a job
runs it (cwltool reads them only as it runs a tool): in a package without
`InlineJavascriptRequirement`, every `$(...)` of a field CWL evaluates is a parameter
reference (`$(inputs.name)`, `$(runtime.outdir)`, `$(self[0].basename)`), read by
cwl_utils' own scanner and grammar (cwltool's), and `${...}` is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: The fields whose strings CWL evaluates as expressions.
EXPRESSION_FIELDS = frozenset({
    "arguments", "valueFrom", "glob", "outputEval", "stdin", "stdout", "stderr", "entry",
    "entryname", "envValue", "coresMin", "coresMax", "ramMin", "ramMax", "tmpdirMin",
    "tmpdirMax", "outdirMin", "outdirMax", "when", "timelimit", "pattern", "listing",
    "secondaryFiles"})
#: What a parameter reference may start from.
SYMBOLS = frozenset({"inputs", "self", "runtime"})


def reference_problems(document: Any, source: str) -> Iterator[str]:
    """Each reference of the loaded tool `document` that no run could evaluate, as
    `source:line:column: why` (the place of its field's value)."""
    from cwl_utils.expression import scanner
    from cwl_utils.sandboxjs import param_re

    for text, place in _expression_strings(document):
        scan = text
        while (found := scanner(scan)) is not None:
            start, end = found
            expression = scan[start:end]
            if not expression.startswith("$"):  # an escape (`\$(`): no reference
                pass
            elif expression.startswith("${"):
                yield (f"{source}:{place}: {expression[:80]} is JavaScript, which needs "
                       "InlineJavascriptRequirement.")
            elif (match := param_re.match(expression[1:])) is None:
                yield (f"{source}:{place}: syntax error in the parameter reference "
                       f"{expression[:80]} (JavaScript needs InlineJavascriptRequirement).")
            elif match.group(1) not in SYMBOLS and match.group(1) != "null":
                yield (f"{source}:{place}: the parameter reference {expression[:80]} starts "
                       f"from {match.group(1)!r}; it may start from inputs, self or runtime.")
            scan = scan[end:]


def _expression_strings(node: Any, evaluated: bool = False) -> Iterator[tuple[str, str]]:
    """The strings of the fields CWL evaluates (`evaluated`: the items of such a field's
    list), each with its `line:column` (1-based)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and key in EXPRESSION_FIELDS:
                yield value, _place(node, key, value=True)
            elif not isinstance(value, str):
                yield from _expression_strings(value, key in EXPRESSION_FIELDS)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if isinstance(value, str) and evaluated:
                yield value, _place(node, index)
            elif not isinstance(value, str):
                yield from _expression_strings(value)


def _place(node: Any, key: Any, value: bool = False) -> str:
    """Where the loader found a field's value (or a list's item), as `line:column`."""
    at = getattr(getattr(node, "lc", None), "data", {}).get(key)
    if not at:
        return "?"
    line, column = (at[2], at[3]) if value and len(at) >= 4 else (at[0], at[1])
    return f"{line + 1}:{column + 1}"
