"""Runs a deployed CWL process in its job's own process (the entry `run`), with the package
(`cwl.FILE_NAME`) and the name of the process to run in it (`cwl.TARGET_NAME`) in the
working folder; a file input given by reference is its `path` where the worker staged it.
cwltool runs the tools in the job's own sandbox (`own_sandbox.OwnSandbox`), or, for a
package of containers, asks the worker for each tool's container (`container_client`, given
as its user-space Docker command); its log and the tools' output are the job's log. A file
among the results is its path (the worker takes it from there: `child.send_files`), name
and size, and its contents when it is text of 64 KiB or less.

cwltool and the CWL schemas are loaded once by the process that forks the job's
(`forkserver`, `warm`; the schemas from the worker's file, `cwl_schemas`): a run then costs
tens of milliseconds, not a second.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cwltool.main import main as cwltool
from cwltool.process import get_schema

from process_api.data.job_sections import JOB_SECTIONS
from process_api.deployment import cwl_schemas
from process_api.deployment.cwl import FILE_NAME, TARGET_NAME
from process_api.runner.command import CommandFailed, message_tail, output_tail
from process_api.runner.container_client import SOCKET_VARIABLE, write_script

if TYPE_CHECKING:  # a type only: its module's imports (jsonschema) would cost each spare
    from process_api.processes.definition import Context

#: A result file's contents are given up to this size.
CONTENTS_BYTES = 65536
#: A failed run's message at most (its log holds the rest).
MESSAGE_CHARS = 500
#: cwltool's advice before its error, which a job's user cannot follow.
ADVICE = re.compile(r"Workflow error, try again with --debug for more information:\s*")


def _job(inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs as CWL's job: a file given by its contents is a File literal, a staged
    one a File at its path."""
    def literal(value: Any) -> Any:
        if isinstance(value, dict) and "path" in value:
            return {"class": "File", "path": value["path"]}
        if isinstance(value, dict):
            return {"class": "File", **value}
        if isinstance(value, list):
            return [literal(v) for v in value]
        return value

    return {name: literal(value) for name, value in inputs.items()
            if name not in JOB_SECTIONS}


def _result(value: Any, output: str) -> Any:
    if isinstance(value, list):
        return [_result(v, output) for v in value]
    if isinstance(value, dict) and value.get("class") == "File":
        path = Path(value["path"])
        if path.is_symlink():  # what it names is not the job's to give
            raise CommandFailed(f"Output {output}: {value['basename']} is a link, which a "
                                "job's results may not be.")
        found = {"class": "File", "path": value["path"], "basename": value["basename"],
                 "size": value["size"]}
        if value["size"] <= CONTENTS_BYTES:
            with contextlib.suppress(UnicodeDecodeError):  # binary: no contents
                text = path.read_bytes().decode()
                if "\x00" not in text:  # nor for a NUL, which text does not hold
                    found["contents"] = text
        return found
    return value


class RunLog(logging.Handler):
    """cwltool's records (and cwl_utils'), as the job's log shows them: without Python's
    tracebacks, without paths of the service's install or of the job's folder; its last
    error kept for the job's message, on one line."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = sorted({sys.prefix, sys.base_prefix, str(Path.cwd())}, key=len,
                             reverse=True)
        self.error: str | None = None
        self.written: list[str] = []  # its records as written, amid the tools' output

    def emit(self, record: logging.LogRecord) -> None:
        text = ADVICE.sub("", record.getMessage())  # --debug is not theirs to give
        for path in self.hidden:
            text = text.replace(f"file://{path}/", "").replace(f"{path}/", "") \
                .replace(path, ".")
        line = f"{record.levelname} {text}\n"
        self.written.append(line)
        sys.stderr.write(line)
        if record.levelno >= logging.ERROR:
            self.error = _one_line(text)


def _tools_output(tail: bytearray, written: list[str]) -> str:
    """The end of the output less cwltool's own records (its commands, with the sandbox's
    folders, and its progress): what the tools said."""
    text = tail.decode(errors="replace")
    for line in written:
        text = text.replace(line, "", 1)
    return message_tail(text)


def _one_line(text: str) -> str:
    """cwltool's error as one line."""
    return " ".join(text.split())[:MESSAGE_CHARS]


def warm() -> None:
    """What every run would load first, loaded once by the process that forks the runs:
    the worker's schemas made ahead, else built here."""
    if not cwl_schemas.load():
        for version in cwl_schemas.VERSIONS:
            get_schema(version)


def _standard_schemas() -> None:
    """cwltool's schemas as they are: the standard ones, loaded (its default resets them,
    dropping what `warm` loaded)."""


def run(inputs: dict[str, Any], context: Context) -> dict[str, Any]:
    """The results of the package's process named in `TARGET_NAME`, run on `inputs`."""
    target = Path(TARGET_NAME).read_text()
    Path("job.json").write_text(json.dumps(_job(inputs)))
    out = io.StringIO()
    containers = ["--no-container"] if SOCKET_VARIABLE not in os.environ else \
        [f"--user-space-docker-cmd={write_script(Path.cwd())}"]
    log = RunLog()
    sys.argv[0] = "cwltool"  # its first line names it so, not by the service's path to it
    expressions = logging.getLogger("cwl_utils")  # its own stderr handler: replaced
    expressions.handlers, expressions.propagate = [log], False
    with output_tail() as tail:
        # the outputs left where the tools wrote them: moving them would copy what a link
        # names, and a link is refused
        code = cwltool([*containers, "--disable-color", "--leave-outputs", "--leave-tmpdir",
                        "--tmpdir-prefix", "tmp/", "--tmp-outdir-prefix", "tmp/",
                        f"{FILE_NAME}#{target}" if target else FILE_NAME, "job.json"],
                       stdout=out,
                       logger_handler=log, custom_schema_callback=_standard_schemas)
    if code != 0 and log.error:  # the job's message: cwltool's error
        raise CommandFailed(log.error)
    if code != 0:  # a tool failed: the end of its own output says why
        text = _tools_output(tail, log.written)
        raise CommandFailed(f"The CWL run failed (cwltool exit status {code})"
                            + (f": {text}" if text else "."))
    return {k: _result(v, k) for k, v in json.loads(out.getvalue()).items()}
