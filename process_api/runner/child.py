"""Runs one job in its own OS process, forked by the worker's fork server (`forkserver`).

The request is `{"entry" or "command", "files", "inputs", "limits", "job"}`; the process
writes the files into its working folder, applies the limits, runs the job and writes
protocol lines (`{"progress"...}`, `{"log"...}`, then `{"result"...}` or `{"error"...}`)
to its protocol stream. What the process (and what it
starts) writes to stdout and stderr is relayed as `log` lines (`protocol`), so it cannot
break the protocol.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from process_api.processes.entry import load_entry
from process_api.processes.failure import JobFailed
from process_api.processes.resources import quantity
from process_api.runner.command import CommandFailed, run_command
from process_api.runner.protocol import MAX_LINE_BYTES, Protocol, relayed_output

EXIT_ERROR, EXIT_MEMORY = 1, 3
#: A `/tmp` with less free than this when a job fails was filled by it (or its neighbours).
TMP_FULL_BYTES = 1 << 20


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
    if request.get("send_files") and "result" in outcome:
        try:
            outcome["result"] = send_files(outcome["result"], folder, protocol)
        except OSError as e:
            outcome, code = {"error": f"A result file could not be read: {e}"}, EXIT_ERROR
    encoded = json.dumps(outcome)
    if len(encoded) >= MAX_LINE_BYTES:  # the worker would not read it
        encoded, code = json.dumps({"error": (
            f"The job's results are {len(encoded) / 2**20:.0f} MiB as JSON, more than the "
            f"{MAX_LINE_BYTES // 2**20} MiB a job may return; a process writes large "
            "results to files.")}), EXIT_ERROR
    protocol.send_encoded(encoded)
    return code


def send_files(result: Any, folder: Path, protocol: Protocol) -> Any:
    """The result's files (CWL `File`s with a `path` in the job's folder) sent to the worker
    (`Protocol.send_file`), each replaced by its number: the result without paths. Only
    regular files of the job's folder are sent (not what a link points to)."""
    sent: list[int] = []

    def walk(value: Any) -> Any:
        if isinstance(value, list):
            return [walk(v) for v in value]
        if not isinstance(value, dict):
            return value
        if value.get("class") != "File" or "path" not in value:
            return {k: walk(v) for k, v in value.items()}
        path = (folder / value["path"]).resolve()
        if not path.is_relative_to(folder.resolve()):
            raise OSError(f"{value['path']} is outside the job's folder")
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode):
                raise OSError(f"{value['path']} is not a regular file")
            protocol.send_file(len(sent), fd, found.st_size)
        finally:
            os.close(fd)
        sent.append(len(sent))
        return {k: v for k, v in value.items() if k not in ("path", "class")} | \
            {"file": sent[-1]}

    return walk(result)


def tmp_full(limits: dict[str, Any]) -> str:
    """What to add to a failed job's error when its sandbox's `/tmp` is full."""
    if not limits.get("tmp_bytes"):
        return ""
    found = os.statvfs(tempfile.gettempdir())
    if found.f_bavail * found.f_frsize >= TMP_FULL_BYTES:
        return ""
    return f" (its /tmp is full: it holds {quantity(limits['tmp_bytes'])}, JOB_TMP_SIZE)"


def _run(request: dict[str, Any], protocol: Protocol,
         limits: dict[str, Any]) -> tuple[dict[str, Any], int]:
    try:
        import resource

        if limits.get("memory_bytes"):
            size = int(limits["memory_bytes"])
            resource.setrlimit(resource.RLIMIT_DATA, (size, size))
        if limits.get("processes"):  # where no cgroup counts them
            resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"],) * 2)
        if limits.get("cores"):
            os.sched_setaffinity(0, limits["cores"])
        if request.get("command"):
            result = run_command(request["command"], request["inputs"])
        else:
            entry = load_entry(request["entry"])
            result = entry(request["inputs"], Context(protocol, request.get("job") or {}))
    except MemoryError:
        return {"error": "memory"}, EXIT_MEMORY
    except (CommandFailed, JobFailed) as e:  # its own words
        return {"error": f"{e}{tmp_full(limits)}"}, EXIT_ERROR
    except Exception as e:  # the job's failure, reported to its record
        return {"error": f"{type(e).__name__}: {e}{tmp_full(limits)}"}, EXIT_ERROR
    return {"result": result}, 0
