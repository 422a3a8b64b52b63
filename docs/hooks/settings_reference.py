"""mkdocs hook: `{{ settings_reference }}` in a page becomes the tables of every setting of
`stac_ext.settings.Settings` (name, default, its docstring), one per concern's class, so
the reference cannot drift from the classes. `undocumented()` names the settings without a
docstring (the docs test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

from stac_ext.settings import CONCERNS, Settings

MARKER = "{{ settings_reference }}"
ROOT = Path(__file__).resolve().parents[2]


def declared(concern: type[BaseSettings]) -> dict[str, FieldInfo]:
    """The settings a concern's class declares itself (not those it inherits: stock's)."""
    return {name: Settings.model_fields[name] for name in concern.__annotations__
            if name in Settings.model_fields}


def own_fields() -> dict[str, FieldInfo]:
    """The settings geocatalog declares, concern by concern."""
    return {name: field for concern in CONCERNS for name, field in declared(concern).items()}


def undocumented() -> list[str]:
    return [name.upper() for name, field in own_fields().items() if not field.description]


def _default(field: FieldInfo) -> str:
    value: Any = field.default
    if value is PydanticUndefined and field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    if value is None or value == []:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        return ", ".join(_default(FieldInfo(default=v)) for v in value)
    if isinstance(value, Path) and value.is_absolute() and value.is_relative_to(ROOT):
        return f"`{value.relative_to(ROOT)}` of the checkout"
    return f"`{value}`"


def settings_reference() -> str:
    tables = []
    for concern in CONCERNS:
        rows = [f"## {(concern.__doc__ or concern.__name__).strip()}",
                f"`{concern.__module__}.{concern.__name__}`", "",
                "| variable | default | meaning |", "|---|---|---|"]
        for name, field in declared(concern).items():
            meaning = " ".join((field.description or "").split()).replace("|", "\\|")
            rows.append(f"| `{name.upper()}` | {_default(field)} | {meaning} |")
        tables.append("\n".join(rows))
    return "\n\n".join(tables)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return markdown.replace(MARKER, settings_reference()) if MARKER in markdown else markdown
