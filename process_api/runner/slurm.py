"""Slurm's commands, as a worker uses them: `sbatch` one job's batch script, `squeue` the
states of the jobs it follows (one call for all of them per poll, not one per job), and
`scancel`. The commands run with the worker's environment (`SLURM_CONF`, the operator's
credentials); nothing of it reaches a job (`sbatch --export=NONE`)."""

from __future__ import annotations

import asyncio
import math
import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from process_api.runner.programs import run_program

#: How often the states of the followed jobs are asked for (one `squeue` for all).
POLL_SECONDS = 0.5
#: How long one of Slurm's commands may take to answer (its controller busy).
COMMAND_SECONDS = 120.0
#: The states in which a Slurm job has ended (`squeue --states=all` keeps them a while).
ENDED = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY",
                   "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "PREEMPTED", "SPECIAL_EXIT",
                   "REVOKED"})
#: What `squeue` says when it knows none of the jobs asked about.
_UNKNOWN = "Invalid job id specified"


class SlurmError(RuntimeError):
    """A Slurm command failed; the message is its own first line."""


@dataclass(frozen=True)
class SlurmState:
    """A Slurm job as `squeue` shows it: its state, the reason it waits, its node."""

    state: str
    reason: str = ""
    node: str = ""

    @property
    def ended(self) -> bool:
        return self.state in ENDED


@dataclass(frozen=True)
class Submission:
    """One job's batch script and what it asks of Slurm."""

    name: str
    folder: Path  # its working folder, where Slurm writes its output (`slurm.out`)
    script: str
    cpus: int
    memory_bytes: int
    wall_seconds: float
    account: str | None = None

    def options(self, partition: str | None) -> list[str]:
        """`sbatch`'s options: Slurm's memory in MiB and time in minutes, rounded up (a
        job gets at least what it asked for)."""
        options = ["--parsable", "--export=NONE", "--nodes=1", "--ntasks=1",
                   f"--job-name={self.name}", f"--chdir={self.folder}",
                   f"--output={self.folder / 'slurm.out'}",
                   f"--error={self.folder / 'slurm.err'}",
                   f"--cpus-per-task={self.cpus}",
                   f"--mem={math.ceil(self.memory_bytes / 2**20)}M",
                   f"--time={math.ceil(self.wall_seconds / 60)}"]
        if self.account:
            options.append(f"--account={self.account}")
        if partition:
            options.append(f"--partition={partition}")
        return options


def batch_script(module: str, folder: Path) -> str:
    """A batch script running `python -m module folder` with this process's Python (the
    same install on every node)."""
    return f"#!/bin/sh\nexec {shlex.join([sys.executable, '-m', module, str(folder)])}\n"


async def _command(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    ran = await run_program(args, env=os.environ, seconds=COMMAND_SECONDS, stdin=stdin)
    if ran.code is None:
        return -1, ran.out, f"{Path(args[0]).name} did not answer in {COMMAND_SECONDS:g} s"
    return ran.code, ran.out, ran.err


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no answer")


class Slurm:
    """The Slurm commands of one worker, and the states of the jobs it follows."""

    def __init__(self, bin_folder: Path, partition: str | None = None) -> None:
        self.bin = bin_folder
        self.partition = partition
        self._followed: set[str] = set()
        self._states: dict[str, SlurmState] = {}
        self._asked: set[str] = set()  # the jobs the last poll asked about
        self._polled = 0.0
        self._lock = asyncio.Lock()

    @classmethod
    def available(cls, partition: str | None = None) -> Slurm:
        """Slurm's client commands, found on this machine; else SlurmError saying how."""
        found = shutil.which("sbatch")
        if found is None:
            raise SlurmError("Slurm's commands (`sbatch`, `squeue`, `scancel`) are not "
                             "installed: `apt-get install slurm-client`, with the "
                             "cluster's slurm.conf and munge key (JOB_EXECUTOR=slurm).")
        return cls(Path(found).parent, partition)

    async def submit(self, submission: Submission) -> str:
        """The Slurm job id of `submission`, queued; SlurmError with sbatch's reason."""
        code, out, err = await _command(str(self.bin / "sbatch"),
                                        *submission.options(self.partition),
                                        stdin=submission.script.encode())
        if code != 0:
            raise SlurmError(_first_line(err).removeprefix("sbatch: error: ")
                             .removeprefix("Batch job submission failed: "))
        return out.strip().partition(";")[0]

    async def cancel(self, job_id: str) -> None:
        """Cancel the Slurm job (Slurm signals and then kills all its processes)."""
        code, _, err = await _command(str(self.bin / "scancel"), job_id)
        if code != 0:
            raise SlurmError(_first_line(err).removeprefix("scancel: error: "))

    async def find(self, name: str) -> str | None:
        """The id of the latest Slurm job named `name` that Slurm still knows."""
        code, out, err = await _command(str(self.bin / "squeue"), "-h", "--states=all",
                                        f"--name={name}", "-o", "%i")
        if code != 0:
            raise SlurmError(_first_line(err))
        ids = [line.strip() for line in out.splitlines() if line.strip()]
        return max(ids, key=int) if ids else None

    async def state(self, job_id: str) -> SlurmState | None:
        """The job's state, at most POLL_SECONDS old (None: Slurm does not know it);
        SlurmError when Slurm does not answer. The job is followed until `forget`."""
        self._followed.add(job_id)
        async with self._lock:
            if job_id not in self._asked or time.monotonic() - self._polled >= POLL_SECONDS:
                await self._poll()
        return self._states.get(job_id)

    def forget(self, job_id: str) -> None:
        self._followed.discard(job_id)
        self._states.pop(job_id, None)

    async def _poll(self) -> None:
        asked = sorted(self._followed)
        code, out, err = await _command(str(self.bin / "squeue"), "-h", "--states=all",
                                        "-j", ",".join(asked), "-o", "%i|%T|%r|%N")
        if code != 0 and _UNKNOWN not in err:
            raise SlurmError(_first_line(err))
        states = {}
        for line in out.splitlines():
            job_id, _, rest = line.strip().partition("|")
            state, _, rest = rest.partition("|")
            reason, _, node = rest.partition("|")
            if job_id and state:
                states[job_id] = SlurmState(state, reason, node)
        self._states = states
        self._asked = set(asked)
        self._polled = time.monotonic()
