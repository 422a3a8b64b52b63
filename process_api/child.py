"""Runs one job in its own OS process, forked by the worker's fork server (`forkserver`).

The request is `{"entry" or "command", "files", "inputs", "limits", "job"}`; the process
writes the files into its working folder, applies the limits, runs the job and writes
protocol lines (`{"progress"...}`, `{"log"...}`, then `{"result"...}` or `{"error"...}`)
to its protocol stream. What the process (and what it
starts) writes to stdout and stderr is relayed as `log` lines (`protocol`), so it cannot
break the protocol.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from process_api.command import run_command
from process_api.entry import load_entry
from process_api.protocol import Protocol, relayed_output

EXIT_ERROR, EXIT_MEMORY = 1, 3


class Context:
    """What the process learns of its job, and how it reports progress."""

    def __init__(self, protocol: Protocol, job: dict[str, Any]) -> None:
        self._protocol = protocol
        self.job_id: str | None = job.get("id")
        self.owner: str = job.get("owner") or ""
        self.project: str | None = job.get("project")
        self.service_url: str | None = job.get("service_url")

    def progress(self, percent: int, message: str | None = None) -> None:
        self._protocol.send({"progress": int(percent), "message": message})


def job_folder(pid: int) -> Path:
    """The working folder of the job whose process is `pid` (the fork server removes it
    when it reaps that process)."""
    return Path(tempfile.gettempdir()) / f"job-{pid}"


def run(request: dict[str, Any], protocol: Protocol) -> int:
    """Apply the limits, run the job in a folder of its own, its output relayed, report on
    `protocol`: the exit status."""
    limits = request.get("limits") or {}
    folder = job_folder(os.getpid())
    folder.mkdir(mode=0o700)
    os.chdir(folder)
    for name, text in (request.get("files") or {}).items():
        (folder / Path(name).name).write_text(text)
    # the relay's thread starts before the memory limit (its stack counts against it)
    with relayed_output(protocol):
        outcome, code = _run(request, protocol, limits)
    protocol.send(outcome)
    return code


def _run(request: dict[str, Any], protocol: Protocol,
         limits: dict[str, Any]) -> tuple[dict[str, Any], int]:
    try:
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
        return {"error": "memory"}, EXIT_MEMORY
    except Exception as e:  # the job's failure, reported to its record
        return {"error": f"{type(e).__name__}: {e}"}, EXIT_ERROR
    return {"result": result}, 0
