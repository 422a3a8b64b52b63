"""Secret inputs: fields a schema marks `writeOnly` or `format: password`.

They are split from the inputs before anything is stored: the job record keeps the
inputs with each secret replaced by a placeholder, plus the secrets encrypted (JWE,
`dir` + A256GCM) for the worker, erased when the job ends. Nothing returns them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from joserfc import jwe
from joserfc.jwk import OctKey

PLACEHOLDER = "***"
Path = tuple[str, ...]
#: A secret shorter than this is scrubbed only where it stands alone (not within a word:
#: "Pu***lishError" would tell a one-letter secret).
SHORT_SECRET = 8


class Scrubber:
    """Replaces secrets in text by PLACEHOLDER: a long one wherever it is, a short one
    where it is not part of a word."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = sorted({s for s in secrets if s and s != PLACEHOLDER}, key=len,
                              reverse=True)
        alone = r"(?<![A-Za-z0-9]){}(?![A-Za-z0-9])"
        self._pattern = re.compile("|".join(
            re.escape(s) if len(s) >= SHORT_SECRET else alone.format(re.escape(s))
            for s in self.secrets)) if self.secrets else None

    def __call__(self, text: str) -> str:
        return self._pattern.sub(PLACEHOLDER, text) if self._pattern else text

    def unfinished(self, text: str) -> int:
        """How many characters at the end of `text` may begin a secret that the next text
        ends (kept back until then)."""
        longest = min(len(text), len(self.secrets[0]) - 1) if self.secrets else 0
        for size in range(longest, 0, -1):
            if any(s.startswith(text[-size:]) for s in self.secrets):
                return size
        return 0


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
