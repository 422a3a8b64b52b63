"""The job list's filters (OGC API Processes Part 1, `job-list`: `type`, `processID`,
`status`, `datetime`, `minDuration`, `maxDuration`) as one FastAPI dependency; a value
that cannot be read is a 400 naming the parameter."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import Query

from process_api.api.errors import OgcError
from process_api.jobs.job_status import JobStatus
from process_api.jobs.store import JobQuery

#: The only job type of this service (OGC: `process`, the default type of a status info).
JOB_TYPE = "process"
_SECONDS = Query(ge=0, le=10**9, description="Seconds: a job's duration is its end (now "
                 "while it runs) minus its start; jobs not yet started have none.")


def _values(given: list[str] | None) -> tuple[str, ...] | None:
    """`a,b` and `x=a&x=b` alike (OGC leaves the array's style open)."""
    values = tuple(v for value in given or [] for v in value.split(",") if v)
    return values or None


def _instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _interval(text: str) -> tuple[datetime | None, datetime | None]:
    """An RFC 3339 instant, or an interval `start/end` with `..` (or nothing) for open."""
    try:
        if "/" not in text:
            moment = _instant(text)
            return moment, moment
        start, end = (part.strip() for part in text.split("/", 1))
        bounds = (None if start in ("", "..") else _instant(start),
                  None if end in ("", "..") else _instant(end))
    except ValueError:
        raise OgcError(400, "invalid-input", f"datetime {text!r}: give an RFC 3339 instant "
                       "or an interval start/end, `..` for an open end.") from None
    if bounds[0] and bounds[1] and bounds[0] > bounds[1]:
        raise OgcError(400, "invalid-input", f"datetime {text!r}: the start is after the end.")
    return bounds


def job_query(
    type: Annotated[list[str] | None, Query(max_length=256, description="Job types; this "
                                            "service's jobs are all `process`.")] = None,
    processID: Annotated[list[str] | None, Query(max_length=4096)] = None,
    status: Annotated[list[str] | None, Query(max_length=256)] = None,
    datetime: Annotated[str | None, Query(max_length=100, description="When the jobs were "
                                          "created: an instant or an interval.")] = None,
    minDuration: Annotated[float | None, _SECONDS] = None,
    maxDuration: Annotated[float | None, _SECONDS] = None,
) -> JobQuery:
    statuses = _values(status)
    if unknown := set(statuses or ()) - set(JobStatus):
        raise OgcError(400, "invalid-input", f"Unknown status {sorted(unknown)}; "
                       f"one of {', '.join(JobStatus)}.")
    if minDuration is not None and maxDuration is not None and minDuration > maxDuration:
        raise OgcError(400, "invalid-input", "minDuration is more than maxDuration.")
    created = _interval(datetime) if datetime else (None, None)
    types = _values(type)
    return JobQuery(process_ids=_values(processID), statuses=statuses,
                    created_from=created[0], created_to=created[1],
                    min_duration=minDuration, max_duration=maxDuration,
                    none=types is not None and JOB_TYPE not in types)
