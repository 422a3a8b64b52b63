"""Runs one job in its own OS process, forked by the worker's fork server (`forkserver`).

The request is `{"entry" or "command", "inputs", "limits", "job"}`; the process applies the
limits, runs the job and writes protocol lines (`{"progress"...}`, then `{"result"...}` or
`{"error"...}`) to its protocol stream. The process's own prints go to stderr, so they
cannot break the protocol.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, TextIO

from process_api.command import run_command
from process_api.entry import load_entry

EXIT_ERROR, EXIT_MEMORY = 1, 3


class Context:
    """What the process learns of its job, and how it reports progress."""

    def __init__(self, out: TextIO, job: dict[str, Any]) -> None:
        self._out = out
        self.job_id: str | None = job.get("id")
        self.owner: str = job.get("owner") or ""
        self.project: str | None = job.get("project")
        self.service_url: str | None = job.get("service_url")

    def progress(self, percent: int, message: str | None = None) -> None:
        self._out.write(json.dumps({"progress": int(percent), "message": message}) + "\n")
        self._out.flush()


def job_folder(pid: int) -> Path:
    """The working folder of the job whose process is `pid` (the fork server removes it
    when it reaps that process)."""
    return Path(tempfile.gettempdir()) / f"job-{pid}"


def run(request: dict[str, Any], protocol: TextIO) -> int:
    """Apply the limits, run the job in a folder of its own, report on `protocol`: the exit
    status."""
    limits = request.get("limits") or {}
    try:
        folder = job_folder(os.getpid())
        folder.mkdir(mode=0o700)
        os.chdir(folder)
        if limits.get("memory_bytes"):
            import resource

            size = int(limits["memory_bytes"])
            resource.setrlimit(resource.RLIMIT_DATA, (size, size))
        if limits.get("cores"):
            os.sched_setaffinity(0, limits["cores"])
        if request.get("command"):
            result = run_command(request["command"], request["inputs"])
        else:
            entry = load_entry(request["entry"])
            result = entry(request["inputs"], Context(protocol, request.get("job") or {}))
    except MemoryError:
        protocol.write(json.dumps({"error": "memory"}) + "\n")
        protocol.flush()
        return EXIT_MEMORY
    except Exception as e:  # the job's failure, reported to its record
        protocol.write(json.dumps({"error": f"{type(e).__name__}: {e}"}) + "\n")
        protocol.flush()
        return EXIT_ERROR
    protocol.write(json.dumps({"result": result}) + "\n")
    protocol.flush()
    return 0
