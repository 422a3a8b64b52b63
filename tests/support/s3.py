"""Talking to the test S3 server (the `s3_endpoint` fixture) as its users would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
import httpx

from tests.support.http import free_port

KEY_ID, SECRET = "test-key-id", "test-secret-key"


def s3_client(endpoint: str):
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY_ID,
                        aws_secret_access_key=SECRET, region_name="us-east-1")


@contextmanager
def secured_s3_server(bucket: str, objects: dict[str, bytes]) -> Iterator[tuple[str, dict]]:
    """An S3 server that checks credentials (moto with IAM authentication) holding
    `objects` in `bucket`: its endpoint, and its owner's keys as a process's `s3` section."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "5"},  # the probe + 4 set-up calls,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                httpx.get(endpoint, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        iam = boto3.client("iam", endpoint_url=endpoint, aws_access_key_id="bootstrap",
                           aws_secret_access_key="bootstrap", region_name="us-east-1")
        iam.create_user(UserName="owner")
        key = iam.create_access_key(UserName="owner")["AccessKey"]
        policy = iam.create_policy(PolicyName="s3", PolicyDocument=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        iam.attach_user_policy(UserName="owner", PolicyArn=policy["Policy"]["Arn"])
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id=key["AccessKeyId"],
                          aws_secret_access_key=key["SecretAccessKey"])
        s3.create_bucket(Bucket=bucket)
        for name, data in objects.items():
            s3.put_object(Bucket=bucket, Key=name, Body=data)
        yield endpoint, {"accessKeyId": key["AccessKeyId"],
                         "secretAccessKey": key["SecretAccessKey"], "endpoint": endpoint,
                         "defaultRegion": "us-east-1"}
    finally:
        server.terminate()
        server.wait(timeout=20)
