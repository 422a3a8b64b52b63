"""A collection's standard name looked up in its convention's vocabulary: a name, an alias
of the current name, or unknown (with the nearest names), and why it is refused, in the
words every caller (the API, proposals, publishing) answers with."""

from __future__ import annotations

import difflib
import heapq
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

import asyncpg

from stac_ext.governance import queries
from stac_ext.governance.tables import words

#: How many nearest names a refusal suggests.
SUGGESTIONS = 3


@dataclass(frozen=True)
class Variable:
    """A name of a convention's vocabulary, as a collection stands for it."""

    convention: str
    name: str  # the table's spelling
    description: str
    units: str
    vocabulary: str  # the table's title
    version: str
    retired_in: str | None = None

    @property
    def collection_id(self) -> str:
        return f"{self.convention}-{self.name.lower()}"

    @property
    def title(self) -> str:
        return words(self.name)

    def where(self) -> str:
        return f"the {self.vocabulary} (version {self.version})"


Kind = Literal["name", "alias", "unknown", "ungoverned"]


@dataclass(frozen=True)
class Lookup:
    """What a vocabulary says of `<convention>-<key>`: `variable` is the name, or the
    current name of an alias; `ungoverned`: the convention has no vocabulary here."""

    convention: str
    key: str
    kind: Kind
    variable: Variable | None = None
    alias: str | None = None
    nearest: list[str] = field(default_factory=list)
    conventions: list[str] = field(default_factory=list)  # known ones, for `ungoverned`
    vocabulary: str = ""
    version: str = ""

    def problem(self, require_vocabulary: bool = True) -> str | None:
        """Why a collection may not stand for this name, or None when it may."""
        why = self.why(require_vocabulary)
        return f"Collection {self.convention}-{self.key}: {why}" if why else None

    def why(self, require_vocabulary: bool = True) -> str | None:
        """Why the name is not one of its convention's names, or None when it is."""
        if self.kind == "name":
            return None
        if self.kind == "ungoverned":
            if not require_vocabulary:
                return None
            known = ", ".join(f"`{c}`" for c in self.conventions) or "none"
            return (f"the convention `{self.convention}` has no vocabulary here "
                    f"(conventions known: {known}).")
        if self.kind == "alias":
            assert self.variable is not None
            return (f"`{self.alias}` is an alias of `{self.variable.name}` in "
                    f"{self.variable.where()}: use the collection "
                    f"{self.variable.collection_id}.")
        hint = ""
        if self.nearest:
            names = [f"`{n}`" for n in self.nearest]
            hint = " Did you mean " + (", ".join(names[:-1]) + " or " + names[-1]
                                       if len(names) > 1 else names[0]) + "?"
        return (f"`{self.key}` is not a standard name of the {self.vocabulary} (version "
                f"{self.version}).{hint}")


def _trigrams(key: str) -> frozenset[str]:
    padded = f"  {key} "
    return frozenset(padded[i:i + 3] for i in range(len(padded) - 2))


class Nearest:
    """The names of one version of a convention's vocabulary, for the ones most like an
    unknown name: trigram likeness (through an index of trigrams) picks a few, difflib's
    ratio orders them."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.sizes: list[int] = []
        self.postings: dict[str, list[int]] = {}
        for n, name in enumerate(names):
            grams = _trigrams(name.lower())
            self.sizes.append(len(grams))
            for gram in grams:
                self.postings.setdefault(gram, []).append(n)

    def __call__(self, key: str, count: int = SUGGESTIONS) -> list[str]:
        wanted = _trigrams(key)
        shared = Counter(n for gram in wanted for n in self.postings.get(gram, ()))
        liked = heapq.nlargest(4 * count, shared, key=lambda n: shared[n] / (
            len(wanted) + self.sizes[n] - shared[n]))
        return sorted((self.names[n] for n in liked), key=lambda name: -difflib.SequenceMatcher(
            None, key, name.lower()).ratio())[:count]


#: (convention, version) -> its names, kept while that version is the loaded one
_NEAREST: dict[tuple[str, str], Nearest] = {}


async def nearest_names(conn: asyncpg.Connection, convention: str, version: str,
                        key: str) -> list[str]:
    """The current names of the convention most like `key`, best first."""
    nearest = _NEAREST.get((convention, version))
    if nearest is None:
        names = [r["name"] for r in await conn.fetch(queries.CURRENT_NAMES, convention)]
        _NEAREST.clear()  # one version of one convention asked at a time, in practice
        nearest = _NEAREST[(convention, version)] = Nearest(names)
    return nearest(key)


async def look_up(conn: asyncpg.Connection, collection_id: str) -> Lookup:
    """The vocabulary's word on a collection id (`<convention>-<standard_name>`)."""
    convention, _, key = collection_id.partition("-")
    key = key.lower()
    row = await conn.fetchrow(queries.RESOLVE, convention, key)
    if row is None:
        known = [r["convention"] for r in await conn.fetch(queries.KNOWN_CONVENTIONS)]
        return Lookup(convention, key, "ungoverned", conventions=known)
    if row["name"] is not None:
        return Lookup(convention, key, "name", Variable(
            convention, row["name"], row["description"], row["units"], row["title"],
            row["version"], row["retired_in"]))
    if row["target"] is not None:
        return Lookup(convention, key, "alias", Variable(
            convention, row["target"], row["target_description"], row["target_units"],
            row["title"], row["version"]), alias=row["alias"])
    nearest = await nearest_names(conn, convention, row["version"], key)
    return Lookup(convention, key, "unknown", nearest=nearest, vocabulary=row["title"],
                  version=row["version"])
