"""Who may do what in the tree: handed in by the composition root, which knows identities."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


class User(Protocol):
    username: str


@dataclass(frozen=True)
class CatalogAccess:
    """The writer dependency and the rights checks."""

    writer: Callable[..., Any]  # FastAPI dependency: an authenticated data-API user
    is_admin: Callable[[User], bool]
    has_right: Callable[[User, str], bool]
    update_right: str = "updateCatalog"
