"""The hostile-input pass (`tests/hostile.py`, as `make fuzz` runs it) against a real
uvicorn: huge numbers, deep or long filters and forged paging tokens in every query
parameter, huge numbers, NaN and deep nesting in every JSON body, a 20,000-term filter in
every search body, costly packages to deploy: no 5xx, always a JSON error body, the
service alive after every request."""

from __future__ import annotations

import pytest

from tests.hostile import hostile_pass
from tests.support.issuer import PROCESS_CLIENT

pytestmark = pytest.mark.slow


def test_hostile_inputs_get_client_errors(live_server: str, issuer) -> None:
    tokens = {"": issuer.token("hostile", rights=["manageCollections", "updateCatalog"]),
              "/processes": issuer.token("hostile", client=PROCESS_CLIENT,
                                         rights=["deployProcess"])}
    problems = hostile_pass(live_server, {"": "/data/api", "/processes": "/processes/api"},
                            tokens)
    assert problems == []
