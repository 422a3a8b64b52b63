"""Talking to the test S3 server (the `s3_endpoint` fixture) as its users would."""

from __future__ import annotations

import boto3

KEY_ID, SECRET = "test-key-id", "test-secret-key"


def s3_client(endpoint: str):
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY_ID,
                        aws_secret_access_key=SECRET, region_name="us-east-1")
