"""The import rules hold (import-linter's layers and independence contracts in
pyproject.toml, also run by `make lint`), every package's docstring names the third-party
packages its modules import, and the architecture map names every module where it lives."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.support.paths import ROOT

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit

PACKAGES = ("stac_ext", "catalogs_ext", "process_api")
MAP = ROOT / "docs" / "contributors" / "architecture.md"


def test_every_import_contract_is_kept() -> None:
    out = subprocess.run([str(Path(sys.executable).with_name("lint-imports"))], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]
    assert "0 broken" in out.stdout and "Contracts: 4 kept" in out.stdout, out.stdout[-1000:]
    # the layers themselves, not hand-kept lists of what each may not import
    rules = (ROOT / "pyproject.toml").read_text()
    assert 'type = "forbidden"' not in rules and "ignore_imports" not in rules


def _packages() -> list[Path]:
    return sorted(init.parent for name in PACKAGES
                  for init in (ROOT / name).rglob("__init__.py"))


def _dotted(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _third_party(graph: grimp.ImportGraph, package: Path) -> set[str]:
    """What the package's own modules (not its subpackages') import from outside."""
    own = [_dotted(package / "__init__.py"),
           *(_dotted(m) for m in package.glob("*.py") if m.name != "__init__.py")]
    found = set()
    for module in own:
        for imported in graph.find_modules_directly_imported_by(module):
            top = imported.split(".")[0]
            if top not in (*PACKAGES, "__future__") and top not in sys.stdlib_module_names:
                found.add(top)
    return found


def test_every_package_names_what_it_imports() -> None:
    graph = grimp.build_graph(*PACKAGES, include_external_packages=True)
    wrong = {}
    for package in _packages():
        text = (package / "__init__.py").read_text()
        said = re.search(r"Third-party imports: (.*?)\.\n", text, re.S)
        named = set() if said is None or said.group(1) == "none" else \
            set(re.findall(r"`([\w]+)`", said.group(1)))
        imported = _third_party(graph, package)
        if said is None or named != imported:
            wrong[_dotted(package)] = {"imports": sorted(imported), "says": sorted(named)}
    assert not wrong, wrong


def _sections(block: str) -> dict[str, str]:
    """Each folder of the map (`stac_ext/platform/auth/`) and the text of its entries: an
    entry starts at an indentation below 20; deeper lines continue the one above."""
    sections: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip())
        if line.strip() and indent < 20:
            entry = line.split()[0]
            while stack and stack[-1][0] >= indent:
                stack.pop()
            if entry.endswith("/"):
                stack.append((indent, (stack[-1][1] if stack else "") + entry))
        for _, folder in stack:
            sections[folder] = sections.get(folder, "") + line + "\n"
    return sections


@pytest.mark.parametrize("package", PACKAGES)
def test_the_architecture_map_names_every_module(package: str) -> None:
    block = MAP.read_text().split("```\n")[1]
    sections = _sections(block)
    missing = []
    for module in sorted((ROOT / package).rglob("*.py")):
        if module.name in ("__init__.py", "__main__.py"):
            continue
        folder = str(module.parent.relative_to(ROOT)) + "/"
        if not re.search(rf"\b{module.stem}\b", sections.get(folder, "")):
            missing.append(str(module.relative_to(ROOT)))
    assert not missing, f"modules the map in {MAP.name} does not name: {missing}"


@pytest.mark.unit
def test_no_module_imports_itself_back() -> None:
    """No circle of imports between modules (the job engine imported its worker, which
    imported it back): the modules that import each other, however far round, listed."""
    import grimp

    graph = grimp.build_graph("stac_ext", "catalogs_ext", "process_api", cache_dir=None)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in edges[module]:
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            component = []
            while True:
                found = stack.pop()
                component.append(found)
                if found == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(edges):
        if module not in order:
            visit(module)
    assert circles == []
