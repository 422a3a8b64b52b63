"""Secret inputs: fields a schema marks `writeOnly` or `format: password`.

They are split from the inputs before anything is stored: the job record keeps the
inputs with each secret replaced by a placeholder, plus the secrets encrypted (JWE,
`dir` + A256GCM) for the worker, erased when the job ends. Nothing returns them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from joserfc import jwe
from joserfc.jwk import OctKey

PLACEHOLDER = "***"
Path = tuple[str, ...]


def secret_paths(schema: Mapping[str, Any], prefix: Path = ()) -> Iterator[Path]:
    if schema.get("writeOnly") or schema.get("format") == "password":
        yield prefix
        return
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            yield from secret_paths(sub, (*prefix, name))


def split_secrets(inputs: dict[str, Any], schema: Mapping[str, Any]
                  ) -> tuple[dict[str, Any], list[tuple[Path, Any]]]:
    """(inputs with placeholders, [(path, secret value)])."""
    redacted = json.loads(json.dumps(inputs))
    found = []
    for path in secret_paths(schema):
        node = redacted
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and path and path[-1] in node:
            found.append((path, node[path[-1]]))
            node[path[-1]] = PLACEHOLDER
    return redacted, found


def merge_secrets(inputs: dict[str, Any], secrets: list[tuple[Path, Any]]) -> dict[str, Any]:
    merged = json.loads(json.dumps(inputs))
    for path, value in secrets:
        node = merged
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return merged


class SecretBox:
    """Encrypts the secrets of one job for the worker that runs it."""

    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError("the job secrets key must be 32 bytes")
        self._key = OctKey.import_key(key)

    def seal(self, secrets: list[tuple[Path, Any]]) -> str | None:
        if not secrets:
            return None
        payload = json.dumps([[list(path), value] for path, value in secrets]).encode()
        return jwe.encrypt_compact({"alg": "dir", "enc": "A256GCM"}, payload, self._key)

    def open(self, sealed: str | None) -> list[tuple[Path, Any]]:
        if not sealed:
            return []
        plaintext = jwe.decrypt_compact(sealed, self._key).plaintext or b"[]"
        return [(tuple(path), value) for path, value in json.loads(plaintext)]
