"""`module:name` references (process entries, EXTRA_PROCESSES): the one place they load."""

from __future__ import annotations

import importlib
from typing import Any


def load_entry(reference: str) -> Any:
    """The object `name` of the module `module`, for a `module:name` reference."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)
