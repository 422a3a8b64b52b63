"""schemathesis hooks of the fuzzing tests (`SCHEMATHESIS_HOOKS=tests.support.fuzz_hooks`):
a check that no answer holds a hidden object's mark (`HIDDEN_MARK`: in the ids and titles
of items and catalogs the fuzzing user may not read)."""

from __future__ import annotations

import os
from typing import Any

import schemathesis

MARK = os.environ.get("HIDDEN_MARK", "")


@schemathesis.check
def no_hidden_object(ctx: Any, response: Any, case: Any) -> bool | None:
    if MARK and MARK in response.text:
        raise AssertionError(f"An object hidden from this caller in the answer to "
                             f"{case.method} {case.formatted_path}")
    return None
