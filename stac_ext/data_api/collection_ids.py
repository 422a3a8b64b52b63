"""The shape of collection ids: `<convention>-<standard_name>`, lower-case, `[a-z0-9_]`
on each side (e.g. `climate_forecast-sea_surface_temperature`)."""

from __future__ import annotations

import re

_PART = "[a-z0-9_]+"
COLLECTION_ID = re.compile(f"^{_PART}-{_PART}$")
STANDARD_NAME = re.compile(f"^{_PART}$")


def collection_id(convention: str, standard_name: str) -> str:
    return f"{convention}-{standard_name}"


MAX_LENGTH = 256


def collection_id_problem(value: str) -> str | None:
    """Why `value` is not a collection id, or None when it is one."""
    if len(value) > MAX_LENGTH:
        return f"Collection id of {len(value)} characters: at most {MAX_LENGTH}."
    if COLLECTION_ID.match(value):
        return None
    return (f"Collection id {value!r} must be '<convention>-<standard_name>': lower-case "
            "letters, digits and '_' on each side of one '-', "
            "e.g. 'climate_forecast-sea_surface_temperature'.")
