"""The documentation is tested like code: the site builds strictly (no broken link, no
missing page), its settings reference leaves no setting out, and every `sh` example of
README.md and of the site's pages (in the site's order) runs against a live server set up
as README's first screen sets it up (`geocatalog serve` on a fresh database with the demo
data, the local development issuer, `geocatalog demo-s3`) and prints what the `output`
block after it says. So neither can drift from the service.

An `output` block is the example's whole output, line by line (trailing spaces aside): `…`
stands for any text within a line, and a line holding only `…` for any lines (none too).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from stac_fastapi.pgstac.config import Settings as PgstacApiSettings

from stac_ext.settings import Settings
from tests.support.cluster import new_database
from tests.support.http import free_port, wait_until_ok
from tests.support.paths import ROOT

README = ROOT / "README.md"
#: How an example names the service's address: `$BASE`, by default where `make run` serves.
DEFAULT_BASE = "BASE=${BASE:-http://127.0.0.1:8080}"
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)


def _text(url: str) -> str:
    """The body at `url`, or nothing while it does not answer."""
    try:
        return httpx.get(url, timeout=5).text
    except httpx.HTTPError:
        return ""


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
    """The output is the expected block, whole (`…`: any text; a lone `…`: any lines)."""
    wanted = [line.rstrip() for line in expected.strip("\n").splitlines()]
    lines = [line.rstrip() for line in output.rstrip("\n").splitlines()]
    patterns = [None if line.strip() == "…" else
                re.compile(".*".join(re.escape(part) for part in line.split("…")))
                for line in wanted]

    @cache
    def fits(at: int, line: int) -> bool:
        """Whether `wanted[at:]` is the output from `lines[line]` to its end."""
        if at == len(patterns):
            return line == len(lines)
        pattern = patterns[at]
        if pattern is None:
            return any(fits(at + 1, later) for later in range(line, len(lines) + 1))
        return line < len(lines) and bool(pattern.fullmatch(lines[line])) \
            and fits(at + 1, line + 1)

    return fits(0, 0)


@pytest.mark.unit
def test_the_matcher() -> None:
    assert matches("a\n…\nc…e", "a\nb\ncde\n")
    assert matches("a\n…", "a\nb\nc\n") and matches("a\n…\nb", "a\nb\n")
    assert not matches("c\na", "a\nc\n")
    assert not matches("a…z", "abc")
    assert not matches("a\nb", "a\nb\nc\n")  # a line more than it says
    assert not matches("a\nb", "x\na\nb\n")
    assert not matches("  a", "a")  # indentation is output too


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
    env["BASE"] = f"http://127.0.0.1:{port}"  # where the examples find the service
    # the demo S3, as the embedded database's service reads it by default
    env["ASSETS_S3"] = json.dumps({"endpoint": f"http://127.0.0.1:{s3_port}",
                                   "accessKeyId": "demo", "secretAccessKey": "demo"})
    cli = [sys.executable, "-m", "stac_ext.cli"]
    processes = [
        subprocess.Popen([*cli, "serve", "--port", str(port)], env=env, cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([*cli, "demo-s3", "--port", str(s3_port)], env=env, cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    try:
        if wait_until_ok(f"http://127.0.0.1:{port}/healthz", seconds=180).status_code != 200:
            raise RuntimeError("the service did not answer 200 within 180 s")
        # demo-s3 puts the monthly SST files last: once listed, every demo file is there
        last = "sst-monthly/sst-2022-01.nc"
        listing = f"http://127.0.0.1:{s3_port}/demo?list-type=2&prefix={last}"
        deadline = time.monotonic() + 180
        while f"<Key>{last}</Key>" not in _text(listing):
            if time.monotonic() > deadline:
                raise RuntimeError(f"demo-s3 did not list {last} within 180 s")
            time.sleep(0.2)
        yield {"env": env, "port": str(port), "s3_port": str(s3_port)}
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)


def pages() -> list[Path]:
    """README.md, then the site's pages in the order of its navigation."""
    def walk(node: object) -> Iterator[str]:
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for entry in node:
                yield from walk(entry)
        elif isinstance(node, dict):
            for value in node.values():
                yield from walk(value)

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    return [README, *(DOCS / page for page in walk(nav))]


#: Each benchmark run's figures, one file a day, linked from the performance page
RESULTS = DOCS / "performance" / "results"


@pytest.mark.unit
def test_the_readme_is_one_screen_of_pages_and_the_figures_one_run_per_table() -> None:
    """README at most 150 lines (a deployment's walk-throughs are the site's pages); the
    performance page states the current figures, one dated run per table, in at most 300
    lines: no row of the same again, no hour of a run, no "measured again" (the history is
    in the results files, each linked from the page)."""
    assert len(README.read_text().splitlines()) <= 150
    figures = (DOCS / "performance.md").read_text()
    assert len(figures.splitlines()) <= 300
    assert not re.search(r"^\| the same|again \(|\bUTC\b|\b\d\d:\d\d\b|measured again|later that "
                         r"day", figures, re.M | re.I)
    linked = set(re.findall(r"\]\(performance/results/([0-9-]+\.md)\)", figures))
    assert linked == {p.name for p in RESULTS.glob("*.md")}


def test_every_page_is_in_the_navigation() -> None:
    """Every page but the benchmark runs' results, which the performance page links."""
    listed = set(pages())
    assert sorted(p.relative_to(ROOT) for p in DOCS.rglob("*.md")
                  if p not in listed and p.parent != RESULTS) == []


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    out = subprocess.run([str(Path(sys.executable).with_name("mkdocs")), "build", "--strict",
                          "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    page = (tmp_path / "site" / "operators" / "configuration.html").read_text()
    assert "<code>DB_STATEMENT_TIMEOUT</code>" in page and "settings_reference" not in page
    # a setting's name is never broken within a table's first column
    assert "stylesheets/extra.css" in page
    assert "td:first-child code { white-space: nowrap; }" in (
        tmp_path / "site" / "stylesheets" / "extra.css").read_text()
    home = (tmp_path / "site" / "index.html").read_text()
    assert "--8&lt;--" not in home and "OGC API Processes" in home
    # opened from disk, its links lead to pages, not to folders
    assert 'href="operators/install.html"' in home and 'href="operators/install/"' not in home


def test_every_setting_is_documented() -> None:
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        import settings_reference as reference
    finally:
        sys.path.pop(0)
    assert reference.undocumented() == []
    table = reference.settings_reference()
    assert len(reference.own_fields()) > 50
    # every setting of ours is in some concern's table (only stock's own are left out)
    stock = set(PgstacApiSettings.model_fields)
    assert set(Settings.model_fields) - stock - set(reference.own_fields()) == set()
    assert "## Database\n`stac_ext.platform.database.settings.DatabaseSettings`" in table
    assert all(f"| `{name.upper()}` |" in table for name in reference.own_fields())


@pytest.mark.slow
def test_examples_print_what_they_say(readme_service) -> None:
    found = [(page, example) for page in pages() for example in examples(page.read_text())]
    assert len(found) >= 9 and all(e.expected for _, e in found), \
        [(p.name, e.line) for p, e in found if not e.expected]
    # one base URL: an example's address is $BASE (where `make run` serves unless set)
    wired = [f"{page.name}:{e.line}" for page, e in found
             if "127.0.0.1:8080" in e.code.replace(DEFAULT_BASE, "")]
    assert wired == [], f"examples with their own address instead of $BASE: {wired}"
    for page, example in found:
        code = example.code.replace("127.0.0.1:9000", f"127.0.0.1:{readme_service['s3_port']}")
        out = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code],
                             env=readme_service["env"], cwd=ROOT, capture_output=True,
                             text=True)
        where = f"{page.relative_to(ROOT)}:{example.line}"
        assert out.returncode == 0, f"{where}: {out.stderr[-2000:]}"
        expected = (example.expected or "").replace("127.0.0.1:8080",
                                                    f"127.0.0.1:{readme_service['port']}")
        assert matches(expected, out.stdout), (
            f"{where} printed:\n{out.stdout[-3000:]}\n"
            f"expected:\n{expected}")
