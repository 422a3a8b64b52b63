"""What a session keeps secret (its tokens), sealed with the session key: JWE, `dir` +
A256GCM, so a copy of the database holds no usable token."""

from __future__ import annotations

import json
from typing import Any

from joserfc import jwe
from joserfc.errors import JoseError
from joserfc.jwk import OctKey


class Unsealed(Exception):
    """Sealed with another key (the key changed), or not by us."""


class Seal:
    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError("the session key must be 32 bytes")
        self._key = OctKey.import_key(key)

    def seal(self, value: dict[str, Any]) -> str:
        return jwe.encrypt_compact({"alg": "dir", "enc": "A256GCM"},
                                   json.dumps(value).encode(), self._key)

    def open(self, sealed: str) -> dict[str, Any]:
        try:
            opened = json.loads(jwe.decrypt_compact(sealed, self._key).plaintext or b"{}")
        except (JoseError, ValueError) as e:
            raise Unsealed(str(e)) from e
        if not isinstance(opened, dict):
            raise Unsealed("not a sealed object")
        return opened
