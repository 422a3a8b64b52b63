"""An execute form from a process's `inputs` JSON Schema: one field per property, nested
objects as fieldsets, with labels, defaults, required marks and limits.

Secret fields (`writeOnly` or `format: password`) become password inputs, never filled in.
A file (the `oneOf` of its contents or a reference to data) is an address, a text or an
upload; a list of files, addresses one per line.
What a plain input cannot express (arrays of objects, `oneOf` of shapes, free objects) is a
JSON text area. The page's script turns the fields back into the execution body by each
field's `path`; the API validates it against the same schema.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

SCALARS = ("string", "number", "integer", "boolean")
#: Words a label spells in capitals.
ACRONYMS = {"id": "ID", "url": "URL", "uri": "URI", "s3": "S3", "cpu": "CPU", "crs": "CRS"}


def label_of(key: str) -> str:
    """A person's label for a schema key without a `title`: `accessKeyId` -> "Access key ID",
    `friendly_name` -> "Friendly name"."""
    words = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", key.replace("_", " "))
    if not words:
        return key
    spelled = [ACRONYMS.get(w.lower(), w.lower()) for w in words]
    first = spelled[0]
    return " ".join([first if first.isupper() else first.capitalize(), *spelled[1:]])


@dataclass
class Field:
    path: list[str]
    label: str
    kind: str  # string | password | number | integer | boolean | enum | lines | json | object
    #          | file | files
    required: bool = False
    description: str = ""
    default: Any = None
    options: list[Any] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)  # min, max, step, pattern, ...
    children: list[Field] = field(default_factory=list)
    #: Shown closed (an optional group of inputs, such as `resources` or `display`): the
    #: inputs a person must give come first, not under a block of tuning knobs.
    folded: bool = False

    @property
    def name(self) -> str:
        return ".".join(self.path)

    @property
    def path_json(self) -> str:
        return json.dumps(self.path)

    @property
    def default_text(self) -> str:
        """The default as the input shows it (never for a secret)."""
        if self.default is None or self.kind == "password":
            return ""
        if self.kind == "json":
            return json.dumps(self.default, indent=2)
        if self.kind == "lines":
            return "\n".join(str(v) for v in self.default)
        return str(self.default)


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow local `$ref`s; a nullable `anyOf`/`oneOf` [X, null] is X."""
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 20:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
    if not isinstance(schema, dict):
        return {}
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            real = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
            if len(real) == 1:
                merged = {k: v for k, v in schema.items() if k != key}
                return {**_resolve(real[0], root), **merged}
    return schema


def _type(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        real = [k for k in kind if k != "null"]
        kind = real[0] if len(real) == 1 else None
    return kind if isinstance(kind, str) else None


def _is_file(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    """A file input: one of its contents (`contents`) or a reference (`href`)."""
    options = schema.get("oneOf")
    if not isinstance(options, list):
        return False
    shapes = [set(_resolve(o, root).get("properties") or {}) for o in options]
    return any("contents" in s for s in shapes) and any("href" in s for s in shapes)


def _field(path: list[str], schema: dict[str, Any], required: bool,
           root: dict[str, Any]) -> Field:
    schema = _resolve(schema, root)
    kind = _type(schema)
    made = Field(path=path, label=str(schema.get("title") or label_of(path[-1])), kind="json",
                 required=required, description=str(schema.get("description") or ""),
                 default=schema.get("default"))
    if _is_file(schema, root):
        made.kind = "file"
    elif kind == "array" and _is_file(_resolve(schema.get("items", {}), root), root):
        made.kind = "files"
    elif isinstance(schema.get("enum"), list):
        made.kind, made.options = "enum", list(schema["enum"])
    elif "const" in schema:
        made.kind, made.options = "enum", [schema["const"]]
    elif kind == "object" and isinstance(schema.get("properties"), dict) and not any(
            k in schema for k in ("anyOf", "oneOf", "allOf")):
        made.kind = "object"
        inner = set(schema.get("required") or [])
        made.children = [_field([*path, name], sub, name in inner, root)
                         for name, sub in schema["properties"].items()]
    elif kind == "string":
        secret = schema.get("writeOnly") is True or schema.get("format") == "password"
        made.kind = "password" if secret else "string"
        made.attributes = {k: schema[k] for k in ("pattern", "minLength", "maxLength")
                           if k in schema}
    elif kind in ("number", "integer"):
        made.kind = kind
        made.attributes = {k: schema[k] for k in ("minimum", "maximum") if k in schema}
    elif kind == "boolean":
        made.kind = "boolean"
    elif kind == "array" and _type(_resolve(schema.get("items", {}), root)) in SCALARS:
        made.kind = "lines"
        made.attributes = {"items": _type(_resolve(schema.get("items", {}), root))}
    return made


def form_fields(inputs: dict[str, Any]) -> list[Field]:
    """The fields of a process's `inputs` schema (an object of named inputs)."""
    root = _resolve(inputs, inputs)
    required = set(root.get("required") or [])
    properties = root.get("properties")
    if not isinstance(properties, dict):
        return [Field(path=[], label="inputs", kind="json", required=True)]
    fields = [_field([name], sub, name in required, inputs) for name, sub in properties.items()]
    for made in fields:
        made.folded = made.kind == "object" and not made.required
    return fields
