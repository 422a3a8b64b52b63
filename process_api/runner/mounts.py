"""What a container mounted, read back from the kernel before its tool starts: each bind
mount must be the very folder (or file) the worker checked. A job's processes can change
their own folders while podman makes the container (a folder swapped for a link between
the check and the mount); the mount table of the created container cannot lie, so a
container whose mounts are not what was asked never runs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_ESCAPED = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class Mounted:
    """One line of a mount table: the filesystem (device), the path in it that is the
    mount's root, and where it is mounted."""

    device: str  # major:minor
    root: str
    point: str


def _unescaped(field: str) -> str:
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 8)), field)


def mount_table(pid: int | str = "self") -> list[Mounted]:
    """The mounts process `pid` sees, its mount points as its root shows them."""
    found = []
    for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines():
        fields = line.split()
        found.append(Mounted(fields[2], _unescaped(fields[3]), _unescaped(fields[4])))
    return found


def _beneath(path: str, folder: str) -> bool:
    return folder == "/" or path == folder or path.startswith(folder.rstrip("/") + "/")


def origin(path: Path, table: list[Mounted]) -> tuple[str, str]:
    """(device, path within that filesystem) of a host path without links: what a bind
    mount of it shows as its root."""
    seen = str(path)
    mount = max((m for m in table if _beneath(seen, m.point)), key=lambda m: len(m.point))
    below = os.path.relpath(seen, mount.point) if seen != mount.point else ""
    return mount.device, os.path.normpath(os.path.join(mount.root, below))


def mount_problem(pid: int, asked: Iterable[tuple[Path, str]]) -> str | None:
    """Why the container whose first process is `pid` (created, not started) does not
    mount each `(host path, target)` asked, or None."""
    host = mount_table()
    inside = {m.point: m for m in mount_table(pid)}
    for source, target in asked:
        found = inside.get(os.path.normpath(target))
        if found is None or (found.device, os.path.normpath(found.root)) != \
                origin(source, host):
            return (f"The folder mounted at {target} is not the one checked (it changed "
                    "while its container was made); the container was not started.")
    return None
