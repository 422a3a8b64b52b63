"""`process_api`'s public exports: the names its `TYPE_CHECKING` block imports (for type
checkers) are exactly those `_EXPORTS` loads at run time, from the same modules, and each
loads."""

from __future__ import annotations

import ast
import inspect

import pytest

import process_api

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit


def test_the_exports_are_listed_alike_and_load() -> None:
    tree = ast.parse(inspect.getsource(process_api))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    typed = {alias.name: str(node.module) for node in block.body
             if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert typed == process_api._EXPORTS
    for name in typed:
        assert getattr(process_api, name) is not None, name
