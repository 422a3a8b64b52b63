"""Unit tests of the job engine's pure functions: Kubernetes quantities (`resources`) and
the splitting of secret inputs from what is stored. The end-to-end tests that enforce them
are in test_processes.py (limits) and test_job_engine.py (secrets)."""

from __future__ import annotations

import pytest

from process_api.jobs.secrets import PLACEHOLDER, merge_secrets, secret_paths, split_secrets
from process_api.processes.resources import Ceilings, ResourceError, parse_cpu, parse_memory, plan

#: no database, no server: `make test-unit` runs these in seconds
pytestmark = pytest.mark.unit

SCHEMA = {"type": "object", "properties": {
    "s3": {"type": "object", "properties": {
        "accessKeyId": {"type": "string"},
        "secretAccessKey": {"type": "string", "writeOnly": True},
        "sessionToken": {"type": "string", "format": "password"}}},
    "credentials": {"type": "object", "properties": {
        "password": {"type": "string", "writeOnly": True}}}}}


@pytest.mark.parametrize("quantity, cores", [("2", 2.0), ("0.5", 0.5), ("500m", 0.5),
                                             ("1500m", 1.5)])
def test_cpu_quantities(quantity: str, cores: float) -> None:
    assert parse_cpu(quantity) == cores


@pytest.mark.parametrize("quantity, size", [("512Mi", 512 * 2**20), ("1Gi", 2**30),
                                            ("1G", 10**9), ("1.5Ki", 1536), ("100", 100),
                                            ("2k", 2000)])
def test_memory_quantities(quantity: str, size: int) -> None:
    assert parse_memory(quantity) == size


@pytest.mark.parametrize("quantity", ["", "Mi", "1 Gi", "1GB", "-1Gi", "1e3"])
def test_not_memory_quantities(quantity: str) -> None:
    with pytest.raises(ValueError, match="not a memory quantity"):
        parse_memory(quantity)


def test_plan_applies_limits_and_refuses_requests_beyond_the_worker() -> None:
    applied = plan({"limits": {"cpu": "500m", "memory": "256Mi"}})
    assert applied.memory_bytes == 256 * 2**20
    assert applied.cores is not None and len(applied.cores) == 1  # a fraction rounds up
    with pytest.raises(ResourceError, match=r"requests\.cpu 1000 is more than this worker's"):
        plan({"requests": {"cpu": "1000"}})


def test_every_job_has_the_operators_ceilings() -> None:
    ceilings = Ceilings(memory=2**30, memory_max=4 * 2**30, processes=64, tmp_bytes=2**28,
                        wall_seconds=60)
    # no memory asked: the default, or what the job requests when that is more
    assert plan(None, ceilings).child_limits() == {"cores": None, "memory_bytes": 2**30,
                                                   "processes": 64}
    assert plan({"requests": {"memory": "2Gi"}}, ceilings).memory_bytes == 2 * 2**30
    assert plan(None, ceilings).wall_seconds == 60
    # beyond the most (a job submitted before the operator lowered it): refused to run
    with pytest.raises(ResourceError, match="resources/limits/memory: at most 4Gi"):
        plan({"limits": {"memory": "5Gi"}}, ceilings)


def test_secret_paths_follow_write_only_and_password_fields() -> None:
    assert sorted(secret_paths(SCHEMA)) == [("credentials", "password"),
                                            ("s3", "secretAccessKey"), ("s3", "sessionToken")]


def test_split_replaces_secrets_and_merge_restores_them() -> None:
    inputs = {"s3": {"accessKeyId": "AK", "secretAccessKey": "SK"}, "other": 1}
    redacted, secrets = split_secrets(inputs, SCHEMA)
    assert redacted == {"s3": {"accessKeyId": "AK", "secretAccessKey": PLACEHOLDER}, "other": 1}
    assert secrets == [(("s3", "secretAccessKey"), "SK")]
    assert inputs["s3"]["secretAccessKey"] == "SK"  # the caller's copy is untouched
    assert merge_secrets(redacted, secrets) == inputs
