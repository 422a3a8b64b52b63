"""A job's statuses are `JobStatus`'s: the job store's SQL (its queries, its migrations'
constraint) and the web face's scripts name no other, and those that list the ended ones
list `ENDED`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import process_api
from process_api.jobs import metrics, queries
from process_api.jobs.job_status import ENDED, JOB_LIST_STATUSES, JobStatus
from stac_ext.web.site import STATIC

pytestmark = pytest.mark.unit

#: `status = 'x'`, `status <> 'x'`, `status IN ('x', 'y')` in SQL
_SQL_STATUSES = re.compile(r"status\s*(?:=|<>|IN)\s*\(?((?:'\w+'(?:,\s*)?)+)")
#: `status === "x"`, `status !== "x"`, `["x", "y"].includes(job.status)`, `ENDED = [...]`
_JS_STATUSES = re.compile(r'status\s*[!=]==\s*"(\w+)"|\[((?:"\w+",?\s*)+)\]\.includes\('
                          r'\w+\.status\)|ENDED\s*=\s*\[((?:"\w+",?\s*)+)\]')


def _words(listed: str) -> list[str]:
    return re.findall(r"['\"](\w+)['\"]", listed)


def _sql() -> dict[str, str]:
    sources = {"queries.py": Path(queries.__file__).read_text(),
               "metrics.py": Path(metrics.__file__).read_text()}
    for path in sorted([*process_api.MIGRATIONS_DIR.glob("*.sql"),
                        *process_api.FUNCTIONS_DIR.glob("*.sql")]):
        sources[path.name] = path.read_text()
    return sources


def test_the_sql_names_only_job_statuses() -> None:
    # the queue's own rows (procrastinate's `doing`, ...) are not job records
    named = {name: {w for line in text.splitlines() if "procrastinate" not in line
                    for m in _SQL_STATUSES.finditer(line) for w in _words(m.group(1))}
             for name, text in _sql().items()}
    assert named["queries.py"] and named["metrics.py"]  # the pattern finds them
    for name, words in named.items():
        assert words <= set(JobStatus), (name, words - set(JobStatus))


def test_the_job_tables_constraint_is_every_status() -> None:
    first = (process_api.MIGRATIONS_DIR / "001_jobs.sql").read_text()
    check = re.search(r"CHECK \(status IN \(([^)]*)\)\)", first)
    assert check is not None
    assert _words(check.group(1)) == list(JobStatus)


def test_the_pages_scripts_name_only_job_statuses() -> None:
    for script in ("job.js", "jobs.js"):
        text = (STATIC / script).read_text()
        found = list(_JS_STATUSES.finditer(text))
        assert found, script
        for match in found:
            one, listed, ended = match.groups()
            words = [one] if one else _words(listed or ended)
            assert set(words) <= set(JobStatus), (script, words)
            if ended:
                assert set(words) == ENDED, script


def test_a_job_list_filters_by_every_status_but_dismissed() -> None:
    assert set(JOB_LIST_STATUSES) == set(JobStatus) - {JobStatus.DISMISSED}
