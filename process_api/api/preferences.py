"""The `Prefer` header of an execution request (RFC 7240), as OGC API Processes reads it:
`respond-async` asks for a job to monitor, `respond-sync` or `wait=N` for the results in
the response. Unknown preferences are ignored, as RFC 7240 says."""

from __future__ import annotations

from dataclasses import dataclass

ASYNC = "respond-async"
SYNC = "respond-sync"


@dataclass(frozen=True)
class SyncPreference:
    """The client waits for the results: at most `seconds`; `applied` is what the
    `Preference-Applied` header says when the results come in time."""

    seconds: float
    applied: str


def sync_preference(header: str | None, longest: float) -> SyncPreference | None:
    """The wait a client asks for, bounded by `longest` seconds; None: asynchronous."""
    if not header:
        return None
    tokens = {}
    for part in header.split(","):
        name, _, value = part.split(";", 1)[0].strip().partition("=")
        tokens[name.strip().lower()] = value.strip().strip('"')
    if ASYNC in tokens:
        return None
    wait = tokens.get("wait")
    if wait is not None and wait.isdigit():
        seconds = min(float(wait), longest)
        return SyncPreference(seconds, f"wait={int(seconds)}")
    if SYNC in tokens:
        return SyncPreference(longest, SYNC)
    return None
