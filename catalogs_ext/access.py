"""Who may do what in the tree: handed in by the composition root, which knows identities."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from fastapi import HTTPException, Request


class User(Protocol):
    @property
    def username(self) -> str: ...
    @property
    def groups(self) -> frozenset[str]: ...


@dataclass(frozen=True)
class CatalogAccess:
    """The writer dependency and the rights checks."""

    writer: Callable[..., Any]  # FastAPI dependency: an authenticated data-API user
    is_admin: Callable[[User], bool]
    has_right: Callable[[User, str], bool]
    #: The caller of a request as the visibility rule takes it (JSON: None anonymous,
    #: {"user", "groups"}, {"all": true}); the data API's read routes know it.
    reader: Callable[[Request], Any] = lambda request: None
    update_right: str = "updateCatalog"

    def reader_json(self, request: Request) -> str:
        return json.dumps(self.reader(request))

    def governs(self, user: User, catalog: Mapping[str, Any]) -> bool:
        """The catalog's owner, a member of its project, or an administrator."""
        return (catalog["owner"] == user.username or self.is_admin(user)
                or (catalog["project"] is not None and catalog["project"] in user.groups))

    def check_project(self, user: User, project: str | None) -> None:
        """A catalog may be put in a project only by one of its members (403)."""
        if project is not None and project not in user.groups:
            raise HTTPException(status_code=403, detail=f"You are not a member of the "
                                f"project {project!r}: only its members create its catalogs.")

    def check_visibility(self, visibility: str | None, project: str | None) -> None:
        """`visibility: project` needs the catalog's project (400)."""
        if visibility == "project" and project is None:
            raise HTTPException(status_code=400, detail="visibility `project`: the catalog "
                                "belongs to no project (name one with `project` when "
                                "creating it).")
