"""Who may see and do what, for every kind of resource, stated once: the table `RULES`.

A caller is anonymous, or a user with groups (their projects) and rights of an API's
client, or an administrator of that API (who holds every right of it). A resource has an
owner, maybe a project, and (but for jobs) a visibility: `private` (its owner), `project`
(the members of its project), `public` (anyone). The SQL reads the same rule
(`geocatalog.may_read`, `catalogs.may_read`, `processes.may_read`), and a test holds it to
this table.

    kind        read                     change                   share (into a project)
    item        owner, admin, readers    owner, admin             member, admin
    catalog     owner, admin, readers    owner, member, admin     member, admin
    process     owner, admin, readers    owner, admin             member, admin
    job         owner, member, admin     owner, member, admin     member, admin
    collection  readers, admin           admin

`change`: replace or delete (a job: dismiss; a catalog: also add a catalog under it; a
collection: also create one, or decide a proposal for one). `update` is `change` and the
right `RIGHTS` names: a catalog's fields need `updateCatalog`. A deployed process is
changed, and deployed at all, with the right `deployProcess`; `publish` (make it public)
is an administrator's alone (`PUBLIC_BY_ADMINS`).
`readers`: whom the visibility names (anyone, the project's members, or nobody more; a
collection is public); `member`: of the resource's project, or for sharing of the project
it is put into. Each cell is the same words in every API's answers (`refusal`), and every
API refuses one way (`require`: a 403 with those words).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

Visibility = Literal["private", "project", "public"]
#: Who reads a resource, as clients write it.
VISIBILITIES: tuple[Visibility, ...] = get_args(Visibility)
Kind = Literal["item", "catalog", "process", "job", "collection"]
Action = Literal["read", "change", "update", "share", "publish"]
Role = Literal["owner", "member", "admin", "readers"]


def _row(read: str, change: str, share: str = "") -> Mapping[Action, frozenset[Role]]:
    """One kind's cells: each the roles it names, by their names (no `share`: a kind not
    shared into projects)."""
    cells: dict[Action, frozenset[Role]] = {}
    named: tuple[tuple[Action, str], ...] = (("read", read), ("change", change),
                                             ("share", share))
    for action, names in named:
        if unknown := set(names.split()) - set(get_args(Role)):
            raise ValueError(f"not roles: {sorted(unknown)}")
        if names:
            cells[action] = frozenset(cast(list[Role], names.split()))
    return cells


RULES: Mapping[Kind, Mapping[Action, frozenset[Role]]] = {
    #                  read                   change                share
    "item":       _row("owner admin readers", "owner admin",        "member admin"),
    "catalog":    _row("owner admin readers", "owner member admin", "member admin"),
    "process":    _row("owner admin readers", "owner admin",        "member admin"),
    "job":        _row("owner member admin",  "owner member admin", "member admin"),
    "collection": _row("readers admin",       "admin"),
}
#: The right an action needs besides the table's roles (an admin holds every right).
RIGHTS: Mapping[tuple[Kind, Action], str] = {
    ("catalog", "update"): "updateCatalog",
    ("process", "change"): "deployProcess",
    ("process", "update"): "deployProcess",
    ("process", "share"): "deployProcess",
}
_NAMES: Mapping[Kind, tuple[str, str]] = {
    "item": ("item", "items"), "catalog": ("catalog", "catalogs"),
    "process": ("deployed process", "deployed processes"), "job": ("job", "jobs"),
    "collection": ("collection", "collections")}
#: The kinds of which only an administrator makes a public one (anyone else's deployed
#: process is seen by them or their project only).
PUBLIC_BY_ADMINS: frozenset[Kind] = frozenset({"process"})


@dataclass(frozen=True)
class Caller:
    """Who asks: anonymous (`username` None), or a user with their groups and their rights
    of the API's client; `admin`: administers that API."""

    username: str | None = None
    groups: frozenset[str] = frozenset()
    rights: frozenset[str] = frozenset()
    admin: bool = False

    def member_of(self, project: str | None) -> bool:
        return project is not None and project in self.groups

    def holds(self, right: str) -> bool:
        """An administrator holds every right of the API."""
        return self.admin or right in self.rights

    @property
    def reader(self) -> dict[str, Any] | None:
        """The caller as the SQL's visibility rule takes it: None anonymous, `{"all": true}`
        an administrator, else `{"user", "groups"}`."""
        if self.username is None:
            return None
        if self.admin:
            return {"all": True}
        return {"user": self.username, "groups": sorted(self.groups)}


ANONYMOUS = Caller()


@dataclass(frozen=True)
class Resource:
    """What the rule needs of a resource. `visibility` None: public (items and catalogs
    written before visibilities were)."""

    kind: Kind
    owner: str | None = None
    project: str | None = None
    visibility: Visibility | None = None


def roles(caller: Caller, resource: Resource) -> set[Role]:
    """The roles the caller plays for the resource."""
    found: set[Role] = set()
    if caller.username is not None and caller.username == resource.owner:
        found.add("owner")
    if caller.member_of(resource.project):
        found.add("member")
    if caller.admin:
        found.add("admin")
    visibility = resource.visibility or "public"
    if visibility == "public" or (visibility == "project" and caller.member_of(
            resource.project)):
        found.add("readers")
    return found


def may(caller: Caller, action: Action, resource: Resource) -> bool:
    """Whether the table lets the caller do `action` to `resource`: a role of the cell, and
    the right the action needs. `share` asks about `resource.project`, the project the
    resource is being put into; `publish`, about making a resource of its kind public."""
    if action == "publish":
        return caller.admin or resource.kind not in PUBLIC_BY_ADMINS
    right = RIGHTS.get((resource.kind, action))
    if right is not None and not caller.holds(right):
        return False
    if action == "share" and resource.project is None:
        return True  # nothing is shared with a project
    cell = RULES[resource.kind]["change" if action == "update" else action]
    return bool(roles(caller, resource) & cell)


def refusal(caller: Caller, action: Action, resource: Resource) -> str:
    """Why the caller may not: the rule, and what is missing, in the words every API uses."""
    name, plural = _NAMES[resource.kind]
    right = RIGHTS.get((resource.kind, action))
    if right is not None and not caller.holds(right):
        return lacking(right)
    if action == "publish":
        return f"Only an administrator may make a {name} public."
    if action == "share":
        return (f"You are not a member of the project {resource.project!r}: only its "
                f"members share {plural} with it.")
    who = {"owner": "its owner", "member": "a member of its project",
           "admin": "an administrator"}
    cell = RULES[resource.kind]["change" if action == "update" else action]
    allowed = [who[r] for r in ("owner", "member", "admin") if r in cell]
    verb = "read" if action == "read" else "change"
    if len(allowed) == 1:  # no owner, no project: the kind's rule, not one resource's
        return f"Only {allowed[0]} may {verb} {plural}."
    return f"Only {', '.join(allowed[:-1])} or {allowed[-1]} may {verb} this {name}."


def lacking(right: str) -> str:
    """The words of a refusal for a right the caller does not hold."""
    return (f"This needs the right {right!r}, which your sign-in does not hold: an "
            "administrator of the service grants it.")


def require(caller: Caller, action: Action, resource: Resource) -> None:
    """Nothing if the table lets the caller do `action` to `resource`; else the 403 every
    API answers, in the table's words (`refusal`)."""
    if not may(caller, action, resource):
        # imported here: job processes read this table without the web stack
        from stac_ext.platform.service.errors import Forbidden

        raise Forbidden(refusal(caller, action, resource))


def visibility_problem(visibility: object, project: object, where: str = "") -> str | None:
    """What is wrong with a visibility and project given together, or None: the visibility
    is one of `VISIBILITIES`, and `project` names the project whose members read (`where`:
    the fields' prefix in the document, e.g. `properties.`)."""
    if visibility is not None and visibility not in VISIBILITIES:
        return f"{where}visibility is one of {', '.join(VISIBILITIES)}, not {visibility!r}."
    if visibility == "project" and not (isinstance(project, str) and project):
        return (f"visibility `project` names the project whose members read it in "
                f"{where}project.")
    return None
