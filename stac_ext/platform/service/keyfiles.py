"""Secrets kept in the data dir (issuer key, job secrets key, cluster password): created
once with mode 0600, atomically, then read. Two processes starting together agree on one."""

from __future__ import annotations

import base64
import os
import secrets
import tempfile
from pathlib import Path


def write_once(path: Path, content: str) -> bool:
    """Create `path` (mode 0600) holding `content`; False when it exists already.

    The content is written to a private temporary file first and then hard-linked into
    place, which fails when the name exists: a reader never sees a half-written file, and
    of two racing writers exactly one wins.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # 0600
    try:
        with os.fdopen(fd, "w") as f:
            f.write(content)
        os.link(temporary, path)
    except FileExistsError:
        return False
    finally:
        os.unlink(temporary)
    return True


def load_or_create_key(path: Path, size: int = 32) -> bytes:
    """A random key of `size` bytes stored base64url in `path` (created on first use)."""
    if not path.exists():
        write_once(path, base64.urlsafe_b64encode(secrets.token_bytes(size)).decode())
    return decode_key(path.read_text())


def decode_key(text: str) -> bytes:
    text = text.strip()
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
