"""A real S3-compatible server on loopback (moto's server mode) for tests."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from moto.server import ThreadedMotoServer

from tests.conftest import free_port

KEY_ID, SECRET = "test-key-id", "test-secret-key"


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


def s3_client(endpoint: str):
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY_ID,
                        aws_secret_access_key=SECRET, region_name="us-east-1")
