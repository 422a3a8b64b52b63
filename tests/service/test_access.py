"""The access table (`stac_ext.platform.access`), one test per cell: who of five callers
may do what to a resource of each kind and visibility, written out here by hand, not
derived from the table. No database: `make test-unit` runs them."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

import pytest

from stac_ext.platform.access import (
    ANONYMOUS,
    RULES,
    VISIBILITIES,
    Action,
    Caller,
    Kind,
    Resource,
    may,
    refusal,
    require,
    visibility_problem,
)
from stac_ext.platform.service.errors import Forbidden

pytestmark = pytest.mark.unit

RIGHTS = frozenset({"updateCatalog", "deployProcess"})
#: The callers, for a resource owned by olga in the project ocean-lab.
CALLERS = {
    "anonymous": ANONYMOUS,
    "owner": Caller("olga", frozenset({"other-lab"}), RIGHTS),
    "member": Caller("mia", frozenset({"ocean-lab"}), RIGHTS),
    "other": Caller("otto", frozenset({"other-lab"}), RIGHTS),
    "admin": Caller("root", admin=True),
    # the same people without any right of the API
    "owner without rights": Caller("olga", frozenset({"other-lab"})),
    "member without rights": Caller("mia", frozenset({"ocean-lab"})),
}
EVERYONE = frozenset(CALLERS)
READ_BY_VISIBILITY: dict[str, AbstractSet[str]] = {
    "private": {"owner", "owner without rights", "admin"},
    "project": {"owner", "owner without rights", "member", "member without rights", "admin"},
    "public": EVERYONE,
}
OWNER_ADMIN = {"owner", "owner without rights", "admin"}
OWNER_MEMBER_ADMIN = {*OWNER_ADMIN, "member", "member without rights"}
MEMBER_ADMIN = {"member", "member without rights", "admin"}

def _every(who: AbstractSet[str]) -> dict[str, AbstractSet[str]]:
    """The same callers whatever the visibility."""
    return {visibility: set(who) for visibility in VISIBILITIES}


#: (kind, action) -> visibility -> who may. Sharing asks about the project ocean-lab.
CELLS: dict[tuple[Kind, Action], Mapping[str, AbstractSet[str]]] = {
    ("item", "read"): READ_BY_VISIBILITY,
    ("item", "change"): _every(OWNER_ADMIN),
    ("item", "share"): _every(MEMBER_ADMIN),
    ("catalog", "read"): READ_BY_VISIBILITY,
    ("catalog", "change"): _every(OWNER_MEMBER_ADMIN),
    ("catalog", "update"): _every({"owner", "member", "admin"}),
    ("catalog", "share"): _every(MEMBER_ADMIN),
    ("process", "read"): READ_BY_VISIBILITY,
    ("process", "change"): _every({"owner", "admin"}),
    ("process", "share"): _every({"member", "admin"}),
    ("job", "read"): {"none": OWNER_MEMBER_ADMIN},
    ("job", "change"): {"none": OWNER_MEMBER_ADMIN},
    ("job", "share"): {"none": MEMBER_ADMIN},
    ("collection", "read"): {"none": EVERYONE},
    ("collection", "change"): {"none": {"admin"}},
    # only an administrator makes a deployed process public; anyone an item or catalog
    ("process", "publish"): _every({"admin"}),
    ("item", "publish"): _every(EVERYONE),
    ("catalog", "publish"): _every(EVERYONE),
}


@pytest.mark.parametrize(("kind", "action"), list(CELLS))
def test_the_cell(kind: Kind, action: Action) -> None:
    for visibility, allowed in CELLS[(kind, action)].items():
        resource = Resource(kind, owner="olga", project="ocean-lab",
                            visibility=None if visibility == "none" else visibility)  # type: ignore[arg-type]
        decided = {name for name, caller in CALLERS.items() if may(caller, action, resource)}
        assert decided == allowed, (visibility, decided ^ allowed)


def test_every_cell_of_the_table_is_tested() -> None:
    stated = {(kind, action) for kind, row in RULES.items() for action in row}
    assert stated <= set(CELLS)


def test_nothing_shared_needs_no_membership() -> None:
    assert may(CALLERS["other"], "share", Resource("item", project=None))


def test_items_and_catalogs_without_a_visibility_are_public() -> None:
    assert may(ANONYMOUS, "read", Resource("item", owner="olga"))
    assert may(ANONYMOUS, "read", Resource("catalog", owner="olga"))


def test_refusals_say_the_rule_and_what_is_missing() -> None:
    other, nobody = CALLERS["other"], CALLERS["owner without rights"]
    catalog = Resource("catalog", owner="olga", project="ocean-lab")
    assert refusal(other, "change", catalog) == (
        "Only its owner, a member of its project or an administrator may change this "
        "catalog.")
    assert refusal(nobody, "update", catalog) == (
        "This needs the right 'updateCatalog', which your sign-in does not hold: an "
        "administrator of the service grants it.")
    assert refusal(other, "share", Resource("job", project="ocean-lab")) == (
        "You are not a member of the project 'ocean-lab': only its members share jobs "
        "with it.")
    assert refusal(other, "change", Resource("process", owner="olga")) == (
        "Only its owner or an administrator may change this deployed process.")
    assert refusal(other, "change", Resource("collection")) == (
        "Only an administrator may change collections.")
    assert refusal(other, "publish", Resource("process")) == (
        "Only an administrator may make a deployed process public.")


def test_a_refusal_is_a_403_in_the_tables_words() -> None:
    other, catalog = CALLERS["other"], Resource("catalog", owner="olga")
    assert require(CALLERS["owner"], "change", catalog) is None
    with pytest.raises(Forbidden) as refused:
        require(other, "change", catalog)
    assert (refused.value.status_code, refused.value.detail) == (
        403, "Only its owner, a member of its project or an administrator may change this "
        "catalog.")


def test_the_reader_has_one_encoding() -> None:
    assert ANONYMOUS.reader is None
    assert CALLERS["admin"].reader == {"all": True}
    assert CALLERS["member"].reader == {"user": "mia", "groups": ["ocean-lab"]}


@pytest.mark.parametrize(("visibility", "project", "problem"), [
    ("public", None, None), ("private", None, None), (None, None, None),
    ("project", "ocean-lab", None),
    ("project", None, "visibility `project` names the project whose members read it in "
                      "properties.project."),
    ("project", "", "visibility `project` names the project whose members read it in "
                    "properties.project."),
    ("friends", None, "properties.visibility is one of private, project, public, not "
                      "'friends'."),
])
def test_a_visibility_and_its_project(visibility: str | None, project: str | None,
                                      problem: str | None) -> None:
    assert visibility_problem(visibility, project, "properties.") == problem
