"""A file named in a folder attribute, as an attribute: `key_file = FolderFile("data_dir",
"key.json")` reads as `obj.data_dir / "key.json"`, so a class of files names each once."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class FolderFile:
    """The file `name` of the folder an instance holds as `folder` (a read-only attribute;
    a pydantic model lists this class in its `ignored_types`)."""

    def __init__(self, folder: str, name: str, doc: str = "") -> None:
        self.folder, self.name, self.__doc__ = folder, name, doc or None

    def __get__(self, owner: Any, kind: type | None = None) -> Path:
        if owner is None:
            raise AttributeError(f"{self.name}: a file of an instance's {self.folder}")
        return Path(getattr(owner, self.folder)) / self.name
