"""A convention's vocabulary as a file: the CF Standard Name Table's XML (as
`compliance-checker` ships it, or as cfconventions.org publishes it), or a JSON table of
any convention; read whole, checked, never trusted for more than it says."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: The CF convention, as collection ids name it (`climate_forecast-<standard_name>`).
CF = "climate_forecast"
CF_TITLE = "CF Standard Name Table"
#: The package that ships the CF table, and where in it.
CF_PACKAGE = "compliance-checker"
CF_FILE = "compliance_checker/data/cf-standard-name-table.xml"
#: A name: CF's hold capitals (`..._of_13C_...`); a collection id holds it lower-cased.
NAME = re.compile(r"^[A-Za-z0-9_]+$")
CONVENTION = re.compile(r"^[a-z0-9_]+$")
#: A table file is read whole: the CF table is about 4 MB.
MAX_BYTES = 64 * 2**20


class TableError(ValueError):
    """Why a file is not a vocabulary table, in one line for the admin who loads it."""


@dataclass(frozen=True)
class Entry:
    name: str
    description: str = ""
    units: str = ""


@dataclass
class Table:
    """One version of one convention's vocabulary."""

    convention: str
    title: str
    version: str
    source: str
    entries: list[Entry] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> current name

    def check(self) -> Table:
        """The table, once its names are shaped as collection ids take them (lower-cased:
        `NAME`), each once, and every alias names an entry (`TableError` otherwise). An
        alias that is also a name is dropped: the name wins (CF's table 93 lists three)."""
        if not CONVENTION.match(self.convention):
            raise TableError(f"convention {self.convention!r}: lower-case letters, digits "
                             "and '_' only")
        if not self.entries:
            raise TableError(f"{self.source}: no names")
        keys = {e.name.lower() for e in self.entries}
        if len(keys) != len(self.entries):
            raise TableError(f"{self.source}: a name is listed twice")
        self.aliases = {a: t for a, t in self.aliases.items() if a.lower() not in keys}
        bad = sorted(n for n in [*keys, *self.aliases] if not NAME.match(n))
        if bad:
            raise TableError(f"{self.source}: {len(bad)} name(s) are not letters, digits "
                             f"and '_' (e.g. {bad[0]!r})")
        names = {e.name for e in self.entries}
        orphans = sorted(a for a, t in self.aliases.items() if t not in names)
        if orphans:
            raise TableError(f"{self.source}: alias {orphans[0]!r} names "
                             f"{self.aliases[orphans[0]]!r}, which the table does not hold")
        return self


def shipped_cf_table() -> Path:
    """The CF Standard Name Table of the installed `compliance-checker` (found without
    importing it: only its data file is used)."""
    try:
        path = Path(str(distribution(CF_PACKAGE).locate_file(CF_FILE)))
    except PackageNotFoundError:
        raise TableError(f"the package {CF_PACKAGE} is not installed: it ships the CF "
                         "Standard Name Table") from None
    if not path.is_file():
        raise TableError(f"{CF_PACKAGE} ships no {CF_FILE}")
    return path


def read_table(path: Path, convention: str | None = None) -> Table:
    """The table in `path`: CF's XML (convention `climate_forecast` unless named) or our
    JSON form (which names its convention)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise TableError(f"{path}: larger than {MAX_BYTES // 2**20} MB")
        data = path.read_bytes()
    except OSError as e:
        raise TableError(f"{path}: {e.strerror or e}") from None
    if data.lstrip().startswith(b"<"):
        return cf_xml(data, str(path), convention or CF).check()
    table = json_table(data, str(path))
    if convention and convention != table.convention:
        raise TableError(f"{path} is the vocabulary of {table.convention!r}, not "
                         f"{convention!r}")
    return table.check()


def _text(element: ET.Element | None) -> str:
    return " ".join((element.text or "").split()) if element is not None else ""


def cf_xml(data: bytes, source: str, convention: str = CF) -> Table:
    """A table in the CF Standard Name Table's XML form (schema 2.0: `entry` with
    `canonical_units` and `description`, `alias` with `entry_id`)."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise TableError(f"{source}: not XML ({e})") from None
    if root.tag != "standard_name_table":
        raise TableError(f"{source}: not a standard name table (<{root.tag}>)")
    version = _text(root.find("version_number"))
    if not version:
        raise TableError(f"{source}: no <version_number>")
    entries = [Entry(name=e.get("id", ""), description=_text(e.find("description")),
                     units=_text(e.find("canonical_units")))
               for e in root.iter("entry")]
    aliases = {a.get("id", ""): _text(a.find("entry_id")) for a in root.iter("alias")}
    title = CF_TITLE if convention == CF else f"{convention} standard names"
    return Table(convention, title, version, source, entries, aliases)


class _EntryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=256)
    description: str = Field(default="", max_length=100_000)
    units: str = Field(default="", max_length=256)


class _TableIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    convention: str = Field(max_length=128)
    title: str = Field(max_length=1024)
    version: str = Field(min_length=1, max_length=64)
    names: list[_EntryIn]
    aliases: dict[str, str] = Field(default_factory=dict)


def json_table(data: bytes, source: str) -> Table:
    """A table as JSON: `{"convention", "title", "version", "names": [{"name",
    "description", "units"}], "aliases": {"old_name": "name"}}`."""
    try:
        parsed = _TableIn.model_validate(json.loads(data))
    except (ValueError, ValidationError) as e:
        first = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
                          for err in e.errors()[:3]) if isinstance(e, ValidationError) \
            else str(e).splitlines()[0]
        raise TableError(f"{source}: not a vocabulary table ({first})") from None
    return Table(parsed.convention, parsed.title, parsed.version, source,
                 [Entry(e.name, e.description, e.units) for e in parsed.names],
                 dict(parsed.aliases))


def words(name: str) -> str:
    """A standard name in words, as a title: `sea_surface_temperature` -> `Sea surface
    temperature`."""
    text = name.replace("_", " ")
    return text[:1].upper() + text[1:]
