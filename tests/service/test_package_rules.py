"""The import rules the packages' docstrings state hold (import-linter's contracts in
pyproject.toml, also run by `make lint`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT


def test_every_import_contract_is_kept() -> None:
    out = subprocess.run([str(Path(sys.executable).with_name("lint-imports"))], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]
    assert "0 broken" in out.stdout and "Contracts: 10 kept" in out.stdout, out.stdout[-1000:]
