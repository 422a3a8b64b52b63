"""The `geocatalog` command in a subprocess, as an operator runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

COMMAND = [sys.executable, "-m", "stac_ext.cli"]


def run_cli(*args: str, env: dict[str, str], cwd: Path | None = None
            ) -> subprocess.CompletedProcess[str]:
    """Run it to the end (bounded): exit code, stdout, stderr."""
    return subprocess.run([*COMMAND, *args], env={**os.environ, **env}, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def start_cli(*args: str, env: dict[str, str], **options: Any) -> subprocess.Popen[str]:
    """Start it (a server, a worker); stdout and stderr are piped unless `options` say."""
    return subprocess.Popen([*COMMAND, *args], env={**os.environ, **env},
                            **{"stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
                               "text": True, **options})
