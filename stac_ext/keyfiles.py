"""Secrets kept in the data dir: created once with mode 0600, read afterwards."""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path


def load_or_create_key(path: Path, size: int = 32) -> bytes:
    """A random key of `size` bytes stored base64url in `path` (created on first use)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first
            pass
        else:
            with os.fdopen(fd, "w") as f:
                f.write(base64.urlsafe_b64encode(secrets.token_bytes(size)).decode())
    return decode_key(path.read_text())


def decode_key(text: str) -> bytes:
    text = text.strip()
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
