"""FastAPI's OpenAPI 3.1 document, converted to OpenAPI 3.0.3 (the `oas30` class).

OpenAPI 3.1 schemas are JSON Schema 2020-12; 3.0 has its own subset. The conversion walks
every place a schema can be and rewrites what 3.0 says differently: `type` lists and
`null` (→ `nullable`), `const` (→ one-value `enum`), numeric `exclusiveMinimum` /
`exclusiveMaximum` (→ booleans beside `minimum` / `maximum`), `examples` (→ `example`); it
drops keywords 3.0 does not have (they only describe).
"""

from __future__ import annotations

import copy
from typing import Any

VERSION = "3.0.3"
OPENAPI30_MEDIA_TYPE = "application/vnd.oai.openapi+json;version=3.0"

#: JSON Schema keywords OpenAPI 3.0's Schema Object does not have.
_DROPPED = {"$schema", "$id", "$anchor", "$comment", "$defs", "contentMediaType",
            "contentEncoding", "contentSchema", "prefixItems", "if", "then", "else",
            "dependentRequired", "dependentSchemas", "unevaluatedProperties",
            "unevaluatedItems", "propertyNames", "patternProperties", "contains",
            "minContains", "maxContains", "const"}
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf")


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:  # siblings of $ref are ignored in 3.0
        return {"allOf": [schema], "nullable": True}
    return {**schema, "nullable": True}


def schema30(schema: Any) -> Any:
    """One JSON Schema (2020-12) as an OpenAPI 3.0 Schema Object."""
    if not isinstance(schema, dict):
        return schema
    for key in ("anyOf", "oneOf"):  # `anyOf: [X, {type: null}]` is a nullable X
        options = schema.get(key)
        if isinstance(options, list) and any(_is_null(s) for s in options):
            rest = [s for s in options if not _is_null(s)]
            merged = rest[0] if len(rest) == 1 else {key: rest}
            outer = {k: v for k, v in schema.items() if k != key}
            return schema30({**outer, **_nullable(merged)})
    out = {k: v for k, v in schema.items() if k not in _DROPPED}
    if "const" in schema:
        out["enum"] = [schema["const"]]
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = schema.get(bound)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[limit], out[bound] = value, True
    if "examples" in out:
        examples = out.pop("examples")
        if isinstance(examples, list) and examples:
            out["example"] = examples[0]
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: schema30(s) for name, s in out["properties"].items()}
    for key in ("items", "not"):
        if isinstance(out.get(key), dict):
            out[key] = schema30(out[key])
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = schema30(out["additionalProperties"])
    for key in _SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [schema30(s) for s in out[key]]
    return _types30(out)


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "null" and len(schema) == 1


def _types30(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if kind == "null":
        rest = {k: v for k, v in schema.items() if k != "type"}
        return {**rest, "enum": [None], "nullable": True}
    if not isinstance(kind, list):
        return schema
    kinds = [k for k in kind if k != "null"]
    rest = {k: v for k, v in schema.items() if k != "type"}
    if len(kinds) == 1:
        converted = {**rest, "type": kinds[0]}
    else:
        converted = {**rest, "anyOf": [{"type": k} for k in kinds]}
    return {**converted, "nullable": True} if "null" in kind else converted


def _media(content: dict[str, Any]) -> None:
    for media in content.values():
        if isinstance(media, dict) and "schema" in media:
            media["schema"] = schema30(media["schema"])


def openapi30(document: dict[str, Any]) -> dict[str, Any]:
    """The whole document as OpenAPI 3.0.3 (a copy)."""
    out = copy.deepcopy(document)
    out["openapi"] = VERSION
    for key in ("webhooks", "jsonSchemaDialect"):
        out.pop(key, None)
    out.get("info", {}).pop("summary", None)
    out.get("info", {}).get("license", {}).pop("identifier", None)
    components = out.get("components", {})
    components["schemas"] = {name: schema30(s)
                             for name, s in components.get("schemas", {}).items()}
    for operations in out.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if "schema" in parameter:
                    parameter["schema"] = schema30(parameter["schema"])
            if "requestBody" in operation:
                _media(operation["requestBody"].get("content", {}))
            for response in operation.get("responses", {}).values():
                _media(response.get("content", {}))
                for header in response.get("headers", {}).values():
                    if "schema" in header:
                        header["schema"] = schema30(header["schema"])
    return out
