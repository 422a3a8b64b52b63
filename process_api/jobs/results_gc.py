"""Which files of the service's results store nothing owns any more (`geocatalog results
gc`). Each file `<job id>/<output>/...` belongs to its job's record while the job is not
dismissed (its provenance names it: a failed job's too, for its owner to read), then to the
published items that use it. A file no record names (its worker killed between storing it
and recording it, a job gone), or a dismissed job's file that no item uses any more (the
item deleted), is an orphan; a queued or running job's files are never touched."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import psycopg

from process_api.jobs import queries
from process_api.jobs.job_status import ACTIVE, JobStatus

#: (collection, item id) of published items.
ItemKey = tuple[str, str]
#: What a job's record says about its files: `status`, `provenance`.
Record = Mapping[str, Any]


def job_of(key: str) -> str | None:
    """The job id a store key starts with, or None (a key no job could have written)."""
    first = key.partition("/")[0]
    try:
        return str(uuid.UUID(first))
    except ValueError:
        return None


def publications(record: Record) -> dict[str, list[ItemKey]]:
    """A job's published files: href -> the items made of it."""
    made: dict[str, list[ItemKey]] = {}
    for item in ((record.get("provenance") or {}).get("published") or []):
        if item.get("file") and item.get("collection") and item.get("id"):
            made.setdefault(str(item["file"]), []).append(
                (str(item["collection"]), str(item["id"])))
    return made


def orphans(keys: Iterable[str], records: Mapping[str, Record],
            existing: Callable[[list[ItemKey]], set[ItemKey]]) -> list[str]:
    """The keys of `keys` nothing owns, given the records of their jobs (by id) and
    `existing`, which of some published items exist."""
    candidates: list[tuple[str, list[ItemKey]]] = []
    for key in keys:
        job_id = job_of(key)
        record = records.get(job_id) if job_id else None
        if record is None:
            candidates.append((key, []))
            continue
        if record["status"] in ACTIVE:
            continue  # its files are being written
        written = {w.get("key"): w for w in (record.get("provenance") or {}).get("outputs")
                   or [] if w.get("service_store")}
        if key not in written:
            candidates.append((key, []))
        elif record["status"] == JobStatus.DISMISSED:
            candidates.append((key, publications(record).get(str(written[key]["href"]), [])))
    asked = sorted({item for _, items in candidates for item in items})
    found = existing(asked) if asked else set()
    return [key for key, items in candidates if not any(item in found for item in items)]


def records_of(conn: psycopg.Connection[Any], keys: Iterable[str]) -> dict[str, Record]:
    """The records of the jobs the keys start with (those that exist), by job id."""
    ids = sorted({job for key in keys if (job := job_of(key))})
    rows = conn.execute(queries.RESULT_OWNERS, {"ids": ids}).fetchall() if ids else []
    return {job_id: {"status": status, "provenance": provenance}
            for job_id, status, provenance in rows}
