"""The `s3-manifest` process against a real S3 server on loopback."""

from __future__ import annotations

import hashlib

import httpx
import pytest

from tests.support.http import free_port
from tests.support.jobs import execute, wait_for
from tests.support.s3 import KEY_ID, SECRET, s3_client


def s3_section(endpoint: str) -> dict:
    return {"accessKeyId": KEY_ID, "secretAccessKey": SECRET, "endpoint": endpoint,
            "defaultRegion": "us-east-1", "enabled": True}


async def test_manifest_of_a_prefix(alice_processes: httpx.AsyncClient, s3_endpoint: str) -> None:
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket="manifest")
    objects = {"run/a.csv": b"x,y\n1,2\n", "run/sub/b.bin": bytes(range(256)) * 5000}
    for key, data in objects.items():
        s3.put_object(Bucket="manifest", Key=key, Body=data)
    s3.put_object(Bucket="manifest", Key="other/c.txt", Body=b"not listed")

    r = await execute(alice_processes, "s3-manifest", {
        "source": "s3://manifest/run", "s3": s3_section(s3_endpoint),
        "display": {"friendlyName": "My run", "share": False},
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}})
    assert r.status_code == 201, r.text
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job
    result = (await alice_processes.get(f"{r.headers['Location']}/results")).json()
    assert result["name"] == "My run"
    assert result["count"] == 2
    assert result["totalBytes"] == sum(len(d) for d in objects.values())
    assert {o["key"]: o["sha256"] for o in result["objects"]} == {
        f"manifest/{k}": hashlib.sha256(d).hexdigest() for k, d in objects.items()}


@pytest.mark.parametrize("case", ["empty prefix", "unreachable endpoint"])
async def test_manifest_failures_are_explained(alice_processes, s3_endpoint: str,
                                               case: str) -> None:
    s3 = s3_client(s3_endpoint)
    s3.create_bucket(Bucket="empty-bucket")
    section = s3_section(s3_endpoint if case == "empty prefix"
                         else f"http://127.0.0.1:{free_port()}")
    r = await execute(alice_processes, "s3-manifest", {"source": "s3://empty-bucket/nothing",
                                             "s3": section})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "failed"
    assert job["message"]
    assert SECRET not in job["message"]
    if case == "empty prefix":
        assert "No object under s3://empty-bucket/nothing" in job["message"]
