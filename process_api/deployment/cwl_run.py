"""Runs a deployed CWL process inside its job's process: `python -m process_api.deployment.cwl_run
TARGET`, with the package (`cwl.FILE_NAME`) in the working folder and the job's inputs as
JSON on stdin (a file given by reference: its `path` where the worker staged it); the
results as JSON on stdout. cwltool runs the tools in the job's own sandbox
(`launcher.OwnSandbox`), or, for a package of containers, asks the worker for each tool's
container (`container_client`, given as its user-space Docker command); its log and the
tools' stderr are the job's log. A file
among the results is its path (the worker takes it from there: `child.send_files`), name
and size, and its contents when it is text of 64 KiB or less.
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
from typing import Any

from process_api.data.job_sections import JOB_SECTIONS
from process_api.deployment.cwl import FILE_NAME
from process_api.runner.container_broker import SOCKET_VARIABLE
from process_api.runner.container_client import write_script

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


def _result(value: Any) -> Any:
    if isinstance(value, list):
        return [_result(v) for v in value]
    if isinstance(value, dict) and value.get("class") == "File":
        path = Path(value["path"])
        found = {"class": "File", "path": value["path"], "basename": value["basename"],
                 "size": value["size"]}
        if value["size"] <= CONTENTS_BYTES:
            with contextlib.suppress(UnicodeDecodeError):  # binary: no contents
                found["contents"] = path.read_bytes().decode()
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

    def emit(self, record: logging.LogRecord) -> None:
        text = ADVICE.sub("", record.getMessage())  # --debug is not theirs to give
        for path in self.hidden:
            text = text.replace(f"file://{path}/", "").replace(f"{path}/", "") \
                .replace(path, ".")
        sys.stderr.write(f"{record.levelname} {text}\n")
        if record.levelno >= logging.ERROR:
            self.error = _one_line(text)


def _one_line(text: str) -> str:
    """cwltool's error as one line."""
    return " ".join(text.split())[:MESSAGE_CHARS]


def main(target: str) -> int:
    from cwltool.main import main as cwltool

    inputs = json.load(sys.stdin)
    results = os.dup(1)
    os.dup2(2, 1)  # whatever writes to stdout (tools, cwltool) goes to the log
    Path("job.json").write_text(json.dumps(_job(inputs)))
    out = io.StringIO()
    containers = ["--no-container"] if SOCKET_VARIABLE not in os.environ else \
        [f"--user-space-docker-cmd={write_script(Path.cwd())}"]
    log = RunLog()
    sys.argv[0] = "cwltool"  # its first line names it so, not by the service's path to it
    expressions = logging.getLogger("cwl_utils")  # its own stderr handler: replaced
    expressions.handlers, expressions.propagate = [log], False
    code = cwltool([*containers, "--disable-color", "--outdir", "outputs",
                    "--tmpdir-prefix", "tmp/", "--tmp-outdir-prefix", "tmp/",
                    f"{FILE_NAME}#{target}", "job.json"], stdout=out, logger_handler=log)
    with os.fdopen(results, "w") as stdout:
        if code != 0 and log.error:  # the job's message: cwltool's error
            json.dump({"error": log.error}, stdout)
            return 1
        if code != 0:  # a tool failed: the end of the log (its own stderr) says why
            print(f"The CWL run failed (cwltool exit status {code}); its log says why.",
                  file=sys.stderr)
            return 1
        json.dump({k: _result(v) for k, v in json.loads(out.getvalue()).items()}, stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
