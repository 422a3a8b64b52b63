"""Rules the service states once, found once in its source: the job statuses, who reads a
job, the words of the database being away, the read of an item by its key. A second copy
(the drift these tests stop) is found by searching the source as `git grep` would; the
migrations, which keep what earlier versions defined, are left out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("process_api", "stac_ext", "catalogs_ext")
_STATUS = r"""["'](?:accepted|running|successful|failed|dismissed)["']"""


def _found(pattern: str, *suffixes: str) -> list[str]:
    """The file of each line of our source (but migrations) that `pattern` matches."""
    regex = re.compile(pattern)
    hits = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*")):
            if path.suffix not in suffixes or "migrations" in path.parts:
                continue
            for line in path.read_text().splitlines():
                if regex.search(line):
                    hits.append(str(path.relative_to(ROOT)))
    return hits


def test_the_job_statuses_are_named_once() -> None:
    assert _found(r"^class \w*Status\(StrEnum\)", ".py") == [
        "process_api/jobs/job_status.py"]
    # (a run's end, the runner's `End`, may be "dismissed" or "failed" too: the words only a
    # job's status has)
    assert _found(r"^\s+(ACCEPTED|RUNNING|SUCCESSFUL) = " + _STATUS, ".py") == [
        "process_api/jobs/job_status.py"] * 3
    # no list of them written out again in Python (two statuses or more, in a tuple, list,
    # Literal; the SQL's, single-quoted, are held to them by test_job_status.py)
    python = _STATUS.replace("[\"']", '"')
    assert _found(python + r"\s*,\s*" + python, ".py") == []


def test_who_reads_a_job_is_one_predicate() -> None:
    assert _found(r"FUNCTION processes\.may_read\(", ".sql") == [
        "process_api/functions/visibility.sql"]
    # every job read by a reader goes through it
    readers = _found(r"%\(reader\)s", ".py")
    assert readers == _found(r"processes\.may_read\(owner, project, %\(reader\)s", ".py")
    assert len(readers) == 1


def test_the_database_away_is_worded_once() -> None:
    assert _found(r"database is unavailable", ".py") == [
        "stac_ext/platform/service/errors.py"]
    assert _found(r"^DATABASE_AWAY = Answer\(", ".py") == [
        "stac_ext/platform/service/errors.py"]


def test_an_item_is_read_by_its_key_once() -> None:
    # a function of a collection and an item's id that returns the item
    assert _found(r"FUNCTION geocatalog\.\w+\(_collection text, _id text(?!\)\s*RETURNS void)",
                  ".sql") == ["stac_ext/data_api/functions/items.sql"]
    assert _found(r"geocatalog\.stored_item\(", ".py") == ["stac_ext/data_api/queries.py"]
