"""Who may do what in the tree: handed in by the composition root, which knows identities."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from fastapi import HTTPException, Request

from stac_ext.platform.access import (
    Action,
    Caller,
    Resource,
    may,
    require,
    visibility_problem,
)


class User(Protocol):
    @property
    def username(self) -> str: ...
    @property
    def groups(self) -> frozenset[str]: ...


def _catalog(row: Mapping[str, Any]) -> Resource:
    return Resource("catalog", owner=row["owner"], project=row["project"],
                    visibility=row.get("visibility"))


@dataclass(frozen=True)
class CatalogAccess:
    """The writer dependency, and the caller as the access table takes them."""

    writer: Callable[..., Any]  # FastAPI dependency: an authenticated data-API user
    caller: Callable[[User], Caller]
    #: The caller of a request as the visibility rule takes it (JSON: None anonymous,
    #: {"user", "groups"}, {"all": true}); the data API's read routes know it.
    reader: Callable[[Request], Any] = lambda request: None

    def reader_json(self, request: Request) -> str:
        return json.dumps(self.reader(request))

    def check(self, user: User, action: Action, catalog: Mapping[str, Any]) -> None:
        """403 in the table's words unless the user may `action` the catalog."""
        self._check(user, action, _catalog(catalog))

    def _check(self, user: User, action: Action, resource: Resource) -> None:
        require(self.caller(user), action, resource)

    def governs(self, user: User, catalog: Mapping[str, Any]) -> bool:
        """Whether the user may change the catalog (its owner, a member of its project, or
        an administrator)."""
        return may(self.caller(user), "change", _catalog(catalog))

    def check_project(self, user: User, project: str | None) -> None:
        """A catalog is put in a project only by one of its members (403)."""
        self._check(user, "share", Resource("catalog", project=project))

    def check_visibility(self, visibility: str | None, project: str | None) -> None:
        """`visibility: project` needs the catalog's project (400)."""
        if problem := visibility_problem(visibility, project):
            if visibility == "project":  # a catalog's project is set when it is made
                problem = ("visibility `project`: the catalog belongs to no project (name "
                           "one with `project` when creating it).")
            raise HTTPException(status_code=400, detail=problem)
