"""Runs the command of a process defined as data, inside the job's own process (`child`):
inputs as JSON on its stdin, results as a JSON object from its stdout, its stderr in the
job's log. When it fails (a non-zero status), the job's message is the `error` of the
JSON object it answered, else the end of its stderr. It inherits the
job process's limits (memory, cores) and dies with it (dismissal, a dead worker).
`output_tail` keeps the end of what code run in the job's process itself writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from process_api.runner.orphans import die_with_parent
from process_api.runner.protocol import output_piped, output_to

#: A command's first word that stands for the Python running the job's process (the
#: worker's path to it is not the sandbox's).
PYTHON = "{python}"

#: How much of a failing command's stderr its job's message keeps (the end of it).
STDERR_TAIL = 2000


class CommandFailed(RuntimeError):
    """The command exited with a non-zero status, or did not answer a JSON object."""


def _tee(source: int, log: int, tail: bytearray) -> None:
    """What is read from `source` written on to `log` (the job's log), its end kept."""
    while chunk := os.read(source, 65536):
        os.write(log, chunk)
        tail += chunk
        del tail[:-4 * STDERR_TAIL]  # enough for STDERR_TAIL characters of UTF-8


def tail_text(tail: bytearray) -> str:
    """The end of a command's output, as its job's message quotes it."""
    return message_tail(tail.decode(errors="replace"))


def message_tail(text: str) -> str:
    """The end of a text, as a job's message quotes it."""
    return text.strip()[-STDERR_TAIL:]


@contextmanager
def output_tail() -> Iterator[bytearray]:
    """While the block runs, what this process and what it starts write to descriptors 1
    and 2 still goes to the job's log, and its end is kept (for the job's message)."""
    log = os.dup(2)
    read_end = output_piped()
    tail = bytearray()

    def tee() -> None:  # its descriptors its own: what the block started may outlive it
        try:
            _tee(read_end, log, tail)
        finally:
            os.close(read_end)
            os.close(log)

    teeing = threading.Thread(target=tee, daemon=True)
    teeing.start()
    try:
        yield tail
    finally:
        output_to(log)
        teeing.join(1.0)  # what it left running may hold the pipe open


def run_command(argv: Sequence[str], inputs: dict[str, Any]) -> dict[str, Any]:
    if argv and argv[0] == PYTHON:
        argv = [sys.executable, *argv[1:]]
    # inputs from a file: nothing to write while the command fills its output pipes
    with tempfile.TemporaryFile() as given:
        given.write(json.dumps(inputs).encode())
        given.seek(0)
        try:
            command = subprocess.Popen(list(argv), stdin=given, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, preexec_fn=die_with_parent)
        except OSError as e:  # not found, not executable
            raise CommandFailed(f"The command {argv[0]!r} cannot run: {e.strerror}.") from None
    assert command.stdout is not None and command.stderr is not None
    tail = bytearray()
    tee = threading.Thread(target=_tee, args=(command.stderr.fileno(), 2, tail), daemon=True)
    tee.start()
    output = command.stdout.read()
    returncode = command.wait()
    tee.join(1.0)  # what it left running may hold its stderr open
    try:
        result = json.loads(output)
    except ValueError:
        result = None
    if returncode != 0:
        if isinstance(result, dict) and isinstance(result.get("error"), str):
            raise CommandFailed(result["error"])  # what it says failed, in its words
        text = tail_text(tail)
        raise CommandFailed(f"The command exited with status {returncode}"
                            + (f": {text}" if text else "."))
    if not isinstance(result, dict):
        raise CommandFailed("The command's output is not a JSON object.")
    return result
