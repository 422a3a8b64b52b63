"""Facets as a person reads them: the counts of a search by variable and by year (the data
API's `/aggregate`, with the search's own criteria), each a link narrowing that search, a
variable named in words (`climate_forecast-sea_surface_temperature` is "Sea surface
temperature", its id in the tooltip)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

#: The facets: the aggregation, and the search criterion a bucket sets
FACETS = {"collection_frequency": "collections", "datetime_yearly_frequency": "datetime"}
#: Buckets shown per facet
TOP = 12
#: A search's criteria that an aggregation does not take (paging, order, shape)
NOT_COUNTED = frozenset({"limit", "token", "sortby", "fields", "f"})


def variable_words(collection_id: object) -> str:
    """A collection's variable in words: the standard name of its id (`<convention>-
    <standard_name>`), spaced and capitalised; another id as it is."""
    text = str(collection_id or "")
    convention, dash, name = text.partition("-")
    if not dash or not name or not convention:
        return text
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else text


def counted_criteria(criteria: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The criteria an aggregation of the search takes."""
    return [(k, v) for k, v in criteria if k not in NOT_COUNTED]


def facets(body: Any, criteria: Sequence[tuple[str, str]] = ()
           ) -> dict[str, list[dict[str, Any]]]:
    """Each facet's top buckets of an `/aggregate` answer, each with the search page's
    address of `criteria` (as the person typed them) narrowed to it: that criterion set to
    the bucket's, and whether its count is an estimate (a search of many matches)."""
    found = {a.get("name"): a for a in (body or {}).get("aggregations", [])
             if isinstance(a, dict)}
    shown: dict[str, list[dict[str, Any]]] = {}
    for name, criterion in FACETS.items():
        buckets = (found.get(name, {}).get("buckets") or [])[:TOP]
        approximate = bool(found.get(name, {}).get("approximate"))
        if criterion == "datetime":  # a year, as the search page takes it
            rows = [(b["key"][:4], b["key"][:4], b["key"][:4], b["frequency"])
                    for b in reversed(buckets)]
        else:
            rows = [(variable_words(b["key"]), b["key"], b["key"], b["frequency"])
                    for b in buckets]
        kept = [(k, v) for k, v in criteria if k not in (criterion, "token")]
        shown[name] = [{"label": label, "key": key, "count": count,
                        "approximate": approximate,
                        "href": "ui/search?" + urlencode([*kept, (criterion, value)])}
                       for label, key, value, count in rows]
    return shown
