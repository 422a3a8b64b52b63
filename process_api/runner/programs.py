"""Programs the worker runs to their end (podman's commands, Slurm's): their output in
files, not pipes, and their end awaited as their process's exit. The end of a pipe is seen
only once every process holding it has closed it: podman's container monitor (conmon)
inherits its caller's descriptors and outlives it, and under uvloop (uvicorn's loop:
`geocatalog serve`) a read to the pipe's end then waited out every time limit."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


@dataclass(frozen=True)
class Ran:
    """A program's end: its exit status (None: stopped at its time limit), its output."""

    code: int | None
    out: str
    err: str

    def reason(self) -> str:
        """Its last line of error output (what it said of why it failed), or its status."""
        lines = [line.strip() for line in self.err.splitlines() if line.strip()]
        if lines:
            return lines[-1][:500]
        return "no answer in time" if self.code is None else f"exit status {self.code}"


def _read(file: IO[bytes]) -> str:
    file.seek(0)
    return file.read().decode(errors="replace")


async def run_program(args: Sequence[str], *, env: Mapping[str, str], seconds: float,
                      cwd: Path | None = None, stdin: bytes | None = None) -> Ran:
    """`args` run to its end (killed after `seconds`), `stdin` its input."""
    with contextlib.ExitStack() as files:
        out, err = (files.enter_context(tempfile.TemporaryFile()) for _ in range(2))
        given: Any = subprocess.DEVNULL
        if stdin is not None:
            given = files.enter_context(tempfile.TemporaryFile())
            given.write(stdin)
            given.seek(0)
        process = await asyncio.create_subprocess_exec(
            *args, stdin=given, stdout=out, stderr=err, env=dict(env), cwd=cwd)
        code: int | None
        try:
            async with asyncio.timeout(seconds):
                code = await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                process.kill()
            await process.wait()
            code = None
        return Ran(code, _read(out), _read(err))
