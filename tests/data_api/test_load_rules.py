"""The bulk forms of the item rules answer exactly as the single ones: geometries checked
together by GEOS, hrefs screened in the document's JSON text before any walk."""

from __future__ import annotations

import random
import string
from typing import Any

import pytest

from stac_ext.data_api.geometries import geometry_problem, geometry_problems
from stac_ext.data_api.hrefs import _hrefs, href_problem, scheme
from stac_ext.data_api.item_rules import ItemRules

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit

SQUARE = [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]
GEOMETRIES: list[Any] = [
    {"type": "Point", "coordinates": [1, 2]},
    {"type": "Point", "coordinates": [181, 2]},
    {"type": "Point", "coordinates": [1, -90.5]},
    {"type": "Point", "coordinates": [1e400, 0]},
    {"type": "Point", "coordinates": [2**70, 0]},
    {"type": "Point", "coordinates": ["1", 2]},
    {"type": "Point", "coordinates": []},
    {"type": "Polygon", "coordinates": SQUARE},
    {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]},
    {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]]},
    {"type": "Polygon", "coordinates": "x"},
    {"type": "MultiPolygon", "coordinates": [SQUARE, [[[5, 5], [6, 5], [6, 6], [5, 5]]]]},
    {"type": "LineString", "coordinates": [[0, 0]]},
    {"type": "GeometryCollection", "geometries": [
        {"type": "Point", "coordinates": [0, 0]}, {"type": "Point", "coordinates": [0, 200]}]},
    {"type": "Feature", "geometry": None},
    {"type": "Circle", "coordinates": [0, 0]},
    {"coordinates": [0, 0]},
    "POINT (0 0)",
    [0, 0],
    None,
]


def test_geometries_checked_together_answer_as_one_by_one() -> None:
    assert geometry_problems(GEOMETRIES) == [geometry_problem(g) for g in GEOMETRIES]
    assert geometry_problems([]) == []


def test_item_problems_name_each_item_as_a_single_check_does() -> None:
    rules = ItemRules(invalid_id_chars=("/",))
    timed = {"datetime": "2021-01-01T00:00:00Z"}
    items = [{"id": f"i{n}", "collection": "c", "geometry": g, "properties": timed,
              "assets": {"a": {"href": "s3://b/k"}}} for n, g in enumerate(GEOMETRIES)]
    items += [{"id": "a/b", "collection": "c", "geometry": GEOMETRIES[0]},
              {"id": "x", "collection": "c", "geometry": GEOMETRIES[0], "properties": timed,
               "links": [{"href": "javascript:alert(1)"}]},
              {"id": "t", "collection": "c", "geometry": GEOMETRIES[0],
               "properties": {"start_datetime": "2021-01-01T00:00:00Z"}}]

    def single(item: dict[str, Any]) -> str | None:
        try:
            rules.check(item, "c")
        except ValueError as e:
            return str(e)
        return None

    answers = rules.problems(items)
    assert answers == [single(i) for i in items]
    assert answers[0] is None
    assert answers[1] == ("Item 'i1' has an invalid geometry: the position (181, 2) is "
                          "outside longitude -180..180 and latitude -90..90 (WGS 84, RFC 7946).")
    assert answers[-1] == ("Item 't' has no time: properties.datetime, or start_datetime "
                           "and end_datetime, required.")
    assert answers[-2] == ("Item 'x': links.0.href: a `javascript:` address is not allowed "
                           "(http(s), object storage such as s3://, or a relative address).")


ALPHABET = string.ascii_letters + string.digits + ":/.%?#-_~+ \t\n\"\\\x00\u00e9&;="


@pytest.mark.parametrize("seed", range(4))
def test_the_text_screen_never_passes_an_href_the_walk_refuses(seed: int) -> None:
    """Random hrefs (schemes, escapes, control characters, quotes): whenever a walk of the
    document finds a refused href, the screen of its JSON text found a suspect."""
    rng = random.Random(seed)
    prefixes = ["", "http:", "HTTPS:", "s3:", "javascript:", "JaVaScRiPt:", "data:",
                "file:", "java\tscript:", " javascript:", "\x00data:", "//", "../", "a:"]
    for _ in range(5_000):
        href = rng.choice(prefixes) + "".join(
            rng.choice(ALPHABET) for _ in range(rng.randrange(12)))
        where = rng.choice(["assets", "links", "providers", "deep"])
        document: dict[str, Any] = {"id": "x", "geometry": {"href": "javascript:1"}}
        if where == "assets":
            document["assets"] = {"a": {"href": href}}
        elif where == "links":
            document["links"] = [{"rel": "x", "href": href}]
        elif where == "providers":
            document["providers"] = [{"name": "p", "url": href}]
        else:
            document["properties"] = {"a": [{"b": {"href": href}}]}
        refused = any(scheme(h) not in (None, "http", "https", "s3")
                      for _, h in _hrefs(document) if scheme(h) is not None)
        if refused:
            assert href_problem(document) is not None, href
