"""The statuses a job passes through (OGC API Processes' `statusCode`), named once: the
modules compare with these, and a test holds the SQL's and the pages' words to them."""

from __future__ import annotations

from enum import StrEnum


class JobStatus(StrEnum):
    ACCEPTED = "accepted"  # queued
    RUNNING = "running"
    SUCCESSFUL = "successful"
    FAILED = "failed"
    DISMISSED = "dismissed"  # by its owner or project: gone for them, the row kept


#: Queued or running: what quotas count, and what a worker still changes.
ACTIVE = frozenset({JobStatus.ACCEPTED, JobStatus.RUNNING})
#: Ran to its end: results or an error, and what it read and wrote (provenance).
FINISHED = frozenset({JobStatus.SUCCESSFUL, JobStatus.FAILED})
#: Nothing changes any more.
ENDED = FINISHED | {JobStatus.DISMISSED}
#: What a caller's job list may hold, in the order a filter offers them (a dismissed job is
#: gone from it).
JOB_LIST_STATUSES = tuple(status for status in JobStatus if status is not JobStatus.DISMISSED)
