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
import os
import sys
from pathlib import Path
from typing import Any

from process_api.data.job_sections import JOB_SECTIONS
from process_api.deployment.cwl import FILE_NAME
from process_api.runner.container_broker import SOCKET_VARIABLE
from process_api.runner.container_client import write_script

#: A result file's contents are given up to this size.
CONTENTS_BYTES = 65536


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


def main(target: str) -> int:
    from cwltool.main import main as cwltool

    inputs = json.load(sys.stdin)
    results = os.dup(1)
    os.dup2(2, 1)  # whatever writes to stdout (tools, cwltool) goes to the log
    Path("job.json").write_text(json.dumps(_job(inputs)))
    out = io.StringIO()
    containers = ["--no-container"] if SOCKET_VARIABLE not in os.environ else \
        [f"--user-space-docker-cmd={write_script(Path.cwd())}"]
    code = cwltool([*containers, "--disable-color", "--outdir", "outputs",
                    "--tmpdir-prefix", "tmp/", "--tmp-outdir-prefix", "tmp/",
                    f"{FILE_NAME}#{target}", "job.json"], stdout=out)
    if code != 0:
        print(f"The CWL run failed (cwltool exit status {code}); its log says why.",
              file=sys.stderr)
        return 1
    with os.fdopen(results, "w") as stdout:
        json.dump({k: _result(v) for k, v in json.loads(out.getvalue()).items()}, stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
