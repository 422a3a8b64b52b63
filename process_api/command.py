"""Runs the command of a process defined as data, inside the job's own process (`child`):
inputs as JSON on its stdin, results as a JSON object from its stdout. It inherits the
job process's limits (memory, cores) and dies with it (dismissal, a dead worker)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

from process_api.orphans import die_with_parent

#: How much of a failing command's stderr its job's message keeps (the end of it).
STDERR_TAIL = 2000


class CommandFailed(RuntimeError):
    """The command exited with a non-zero status, or did not answer a JSON object."""


def run_command(argv: Sequence[str], inputs: dict[str, Any]) -> dict[str, Any]:
    try:
        done = subprocess.run(list(argv), input=json.dumps(inputs).encode(),
                              capture_output=True, check=False, preexec_fn=die_with_parent)
    except OSError as e:  # not found, not executable
        raise CommandFailed(f"The command {argv[0]!r} cannot run: {e.strerror}.") from None
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip()[-STDERR_TAIL:]
        raise CommandFailed(f"The command exited with status {done.returncode}"
                            + (f": {tail}" if tail else "."))
    try:
        result = json.loads(done.stdout)
    except ValueError:
        result = None
    if not isinstance(result, dict):
        raise CommandFailed("The command's output is not a JSON object.")
    return result
