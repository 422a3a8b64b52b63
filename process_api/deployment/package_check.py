"""A deployed package is read and validated in a process of its own, never by the API's:
cwltool's loader (seconds for a large workflow) and its JavaScript checks (`nodejs`, run by
cwltool for `InlineJavascriptRequirement`) run there, in the jobs' sandbox (no network),
bounded in memory, processor time and wall time.

    python -m process_api.deployment.package_check [TARGET]   (the package on stdin; its process, or
                                                    the error, as JSON on stdout)
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from process_api.deployment.cwl import CwlProcess, PackageError, read_package
from process_api.runner.isolation import spawn
from process_api.runner.sandbox import Sandbox

#: What one check may use: memory (its data), processor seconds, and seconds in all.
CHECK_MEMORY = 2**30
CHECK_CPU_SECONDS = 60
CHECK_SECONDS = 90


async def checked(text: str, target: str | None, sandbox: Sandbox | None,
                  environment: Mapping[str, str], seconds: float = CHECK_SECONDS
                  ) -> CwlProcess:
    """The process the package `text` holds, validated in a bounded process of its own
    (within `seconds`); PackageError saying why not."""
    command = [sys.executable, "-m", "process_api.deployment.package_check",
               *([target] if target else [])]
    if sandbox is not None:
        command = sandbox.wrap(command, network=False)
    process = await spawn(command, environment, stdin=asyncio.subprocess.PIPE,
                          stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        async with asyncio.timeout(seconds):
            out, _ = await process.communicate(text.encode())
    except TimeoutError:
        raise PackageError(f"Checking the package took more than {seconds:.0f} s; make it "
                           "smaller.") from None
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
    try:
        answer = json.loads(out)
    except ValueError:
        answer = {}
    if "process" in answer:
        found = answer["process"]
        return CwlProcess(**{**found, "images": tuple(found.get("images", ())),
                             "pulled": tuple(found.get("pulled", ()))})
    if "error" in answer:
        raise PackageError(answer["error"])
    raise PackageError(f"Checking the package needed more than {CHECK_MEMORY // 2**20} MiB of "
                       f"memory or {CHECK_CPU_SECONDS} s of processor time (it ended with "
                       f"status {process.returncode}); make it smaller.")


def main(target: str | None) -> int:
    import resource

    resource.setrlimit(resource.RLIMIT_DATA, (CHECK_MEMORY, CHECK_MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (CHECK_CPU_SECONDS, CHECK_CPU_SECONDS))
    text = sys.stdin.read()
    results = os.dup(1)
    os.dup2(2, 1)  # what the loader prints is not the answer
    answer: dict[str, Any]
    try:
        answer = {"process": dataclasses.asdict(read_package(text, target))}
    except PackageError as e:
        answer = {"error": str(e)}
    except (MemoryError, RecursionError):
        return 3
    with os.fdopen(results, "w") as stdout:
        json.dump(answer, stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
