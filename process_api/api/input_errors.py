"""Why an execution's inputs do not match the process's inputs schema, in words: which
field and what is wrong with it, never its value (it may be a password), and for a field
that may take several forms, what the closest one lacks."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import ValidationError
from jsonschema.exceptions import best_match

_TYPES = {"string": "text", "integer": "a whole number", "number": "a number",
          "boolean": "true or false", "object": "an object", "array": "a list",
          "null": "null"}


def _kinds(expected: Any) -> str:
    listed = expected if isinstance(expected, list) else [expected]
    return " or ".join(_TYPES.get(str(kind), str(kind)) for kind in listed)


def _rule(error: ValidationError) -> str:
    """What the value must be, in words."""
    value, rule = error.validator_value, error.validator
    described = error.schema.get("description") if isinstance(error.schema, dict) else None
    words: dict[str, str] = {
        "type": f"must be {_kinds(value)}",
        "enum": "must be one of " + ", ".join(json.dumps(v) for v in value)
        if isinstance(value, list) else "is not one of the values offered",
        "const": f"must be {json.dumps(value)}",
        "pattern": f"is not in the form expected ({described})" if described else
        f"is not in the form expected (the pattern {value})",
        "format": f"must be a {value}",
        "maxLength": f"must be at most {value} characters long",
        "minLength": f"must be at least {value} characters long",
        "maximum": f"must be at most {value}",
        "minimum": f"must be at least {value}",
        "exclusiveMaximum": f"must be less than {value}",
        "exclusiveMinimum": f"must be more than {value}",
        "maxItems": f"must hold at most {value} entries",
        "minItems": f"must hold at least {value} entries",
        "uniqueItems": "must not repeat an entry",
        "multipleOf": f"must be a multiple of {value}",
        "maxProperties": f"must have at most {value} fields",
        "minProperties": f"must have at least {value} fields",
    }
    return words.get(str(rule), f"does not satisfy its {rule} rule")


#: Rules about an object's fields themselves (which it has), not about their values.
_SHAPE = ("required", "additionalProperties", "dependentRequired", "type")


def _closest(error: ValidationError) -> list[ValidationError] | None:
    """Of a value that matched none of its schema's forms (`oneOf`, `anyOf`), the failed
    rules of the form it came closest to: the one it has the fields of (the fewest rules
    about which fields it has failed), then the fewest failed rules; None when no form is
    closer than another."""
    forms: dict[Any, list[ValidationError]] = {}
    for sub in error.context or []:
        forms.setdefault(sub.schema_path[0], []).append(sub)
    scored = sorted((sum(e.validator in _SHAPE and len(e.relative_path) == 0 for e in errs),
                     len(errs), index) for index, errs in forms.items())
    if not scored or (len(scored) > 1 and scored[0][:2] == scored[1][:2]):
        return None
    return forms[scored[0][2]]


def _forms(error: ValidationError) -> str:
    """What a value taking one of several forms must be given by, in words."""
    fields = []
    for form in error.validator_value if isinstance(error.validator_value, list) else []:
        needed = form.get("required") if isinstance(form, dict) else None
        if needed:
            fields.append(" and ".join(f"`{name}`" for name in needed))
        elif isinstance(form, dict) and "type" in form:
            fields.append(_kinds(form["type"]))
    return "must be given by " + (", or ".join(fields) if fields else "one of its forms")


def in_words(error: ValidationError) -> str:
    """`<where>: <what is wrong>` for one failed rule of a schema."""
    where = "/".join(map(str, error.absolute_path)) or "(root)"
    if error.validator in ("oneOf", "anyOf"):
        closest = _closest(error)
        if closest is None:
            return f"{where}: {_forms(error)}"
        return in_words(best_match(closest))
    if error.validator in ("required", "additionalProperties", "dependentRequired"):
        return f"{where}: {error.message}"
    return f"{where}: {_rule(error)}"
