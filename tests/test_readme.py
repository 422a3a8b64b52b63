"""Every `sh` example of README.md runs, in order, against a live server set up as README's
first screen sets it up (`geocatalog serve` on a fresh database with the demo data, the
local development issuer, `geocatalog demo-s3`), and prints what the `output` block after
it says. So the README cannot drift from the service.

In an `output` block, each line must appear in the example's output, in that order; `…`
stands for any text within a line, and a line holding only `…` for any lines.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.cluster import new_database
from tests.support.http import free_port, wait_until_ok

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)


@dataclass(frozen=True)
class Example:
    line: int
    code: str
    expected: str | None


def examples(text: str) -> list[Example]:
    """The `sh` blocks, each with the `output` block that follows it, if any."""
    found: list[Example] = []
    blocks = [(m.group(1), m.group(2), m.start()) for m in FENCE.finditer(text)]
    for n, (lang, code, start) in enumerate(blocks):
        if lang != "sh":
            continue
        following = blocks[n + 1] if n + 1 < len(blocks) else None
        expected = following[1] if following and following[0] == "output" else None
        found.append(Example(text.count("\n", 0, start) + 1, code, expected))
    return found


def matches(expected: str, output: str) -> bool:
    """Each expected line in the output, in order (`…`: any text; a lone `…`: any lines)."""
    lines = [line.strip() for line in output.splitlines()]
    at = 0
    for wanted in (line.strip() for line in expected.strip().splitlines()):
        if wanted == "…":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in wanted.split("…")))
        while at < len(lines) and not pattern.fullmatch(lines[at]):
            at += 1
        if at == len(lines):
            return False
        at += 1
    return True


def test_the_matcher() -> None:
    assert matches("a\n…\nc…e", "a\nb\ncde\n")
    assert not matches("c\na", "a\nc\n")
    assert not matches("a…z", "abc")


@pytest.fixture(scope="module")
def readme_service(database_url: str, tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[dict[str, Any]]:
    """`geocatalog serve` (demo data, local issuer, in-process worker) on a fresh database,
    and `geocatalog demo-s3`: the environment the examples run in, and the ports."""
    url = new_database(database_url, "readme_")
    data_dir = tmp_path_factory.mktemp("readme")
    env = {**os.environ, "DATABASE_URL": url,
           "GEOCATALOG_DATA_DIR": str(data_dir), "OIDC_ISSUER": "", "JWKS_URL": "",
           "LOAD_DEMO_DATA": "true", "IN_PROCESS_WORKER": "true",
           "OUTBOUND_ALLOW": "127.0.0.0/8"}  # as `make run` sets it
    port, s3_port = free_port(), free_port()
    cli = [sys.executable, "-m", "stac_ext.cli"]
    processes = [
        subprocess.Popen([*cli, "serve", "--port", str(port)], env=env, cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([*cli, "demo-s3", "--port", str(s3_port)], env=env, cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    try:
        for url in (f"http://127.0.0.1:{port}/healthz", f"http://127.0.0.1:{s3_port}/demo"):
            if wait_until_ok(url, seconds=180).status_code != 200:
                raise RuntimeError(f"{url} did not answer 200 within 180 s")
        yield {"env": env, "port": str(port), "s3_port": str(s3_port)}
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)


def test_readme_examples_print_what_it_says(readme_service) -> None:
    found = examples(README.read_text())
    assert len(found) >= 7 and all(e.expected for e in found), [e.line for e in found]
    for example in found:
        code = (example.code.replace("127.0.0.1:8080", f"127.0.0.1:{readme_service['port']}")
                .replace("127.0.0.1:9000", f"127.0.0.1:{readme_service['s3_port']}"))
        out = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code],
                             env=readme_service["env"], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, f"README.md:{example.line}: {out.stderr[-2000:]}"
        expected = (example.expected or "").replace("127.0.0.1:8080",
                                                    f"127.0.0.1:{readme_service['port']}")
        assert matches(expected, out.stdout), (
            f"README.md:{example.line} printed:\n{out.stdout[-3000:]}\n"
            f"expected:\n{expected}")
