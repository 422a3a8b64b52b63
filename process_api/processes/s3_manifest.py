"""`s3-manifest`: the process with every section (credentials, demo, display, resources, s3).

Lists the objects under an `s3://bucket/prefix` of the caller's storage and returns their
sizes and SHA-256 checksums, reading each object in chunks.
"""

from __future__ import annotations

import hashlib
from typing import Any

from process_api.processes.definition import Context, Process
from process_api.processes.outbound import OutboundPolicy
from process_api.processes.sections import CREDENTIALS, DEMO, DISPLAY, RESOURCES, S3

_CHUNK = 1 << 20
_DEMO_OBJECTS = {"demo/readme.txt": b"geocatalog demo object\n", "demo/empty.bin": b""}


def s3_storage_options(s3: dict[str, Any], read_timeout: float = 30) -> dict[str, Any]:
    """fsspec/s3fs options for the `s3` section (credentials go only here); `read_timeout`:
    the seconds a read may wait for a byte."""
    client_kwargs = {"endpoint_url": s3.get("endpoint"), "region_name": s3.get("defaultRegion")}
    options = {
        "key": s3.get("accessKeyId"), "secret": s3.get("secretAccessKey"),
        "token": s3.get("sessionToken"), "anon": not s3.get("accessKeyId"),
        "client_kwargs": {k: v for k, v in client_kwargs.items() if v},
        # an unreachable endpoint is reported in seconds, not after minutes of retries
        "config_kwargs": {"connect_timeout": 5, "read_timeout": read_timeout,
                          "retries": {"max_attempts": 2, "mode": "standard"}},
    }
    return {k: v for k, v in options.items() if v is not None}


def s3_filesystem(s3: dict[str, Any], read_timeout: float = 30) -> Any:
    """The caller's S3 storage; its endpoint, user input, must be an allowed target, and so
    must every address its client connects to (`s3_storage`)."""
    from process_api.processes.s3_storage import AllowedS3FileSystem

    if s3.get("endpoint"):
        OutboundPolicy.from_env().check(str(s3["endpoint"]))
    return AllowedS3FileSystem(skip_instance_cache=True,
                               **s3_storage_options(s3, read_timeout))


def manifest(inputs: dict[str, Any], context: Context) -> dict[str, Any]:
    if inputs.get("demo"):
        entries = [{"key": key, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                   for key, data in sorted(_DEMO_OBJECTS.items())]
    else:
        s3 = inputs.get("s3") or {}
        if s3.get("enabled") is False:
            raise ValueError("S3 access is disabled in the inputs (s3.enabled = false).")
        fs = s3_filesystem(s3)
        prefix = str(inputs["source"]).removeprefix("s3://").rstrip("/")
        keys = sorted(path for path, info in fs.find(prefix, detail=True).items()
                      if info.get("type") != "directory")
        if not keys:
            raise ValueError(f"No object under s3://{prefix}.")
        entries = []
        for n, key in enumerate(keys, 1):
            digest, size = hashlib.sha256(), 0
            with fs.open(key, "rb") as f:
                while chunk := f.read(_CHUNK):
                    digest.update(chunk)
                    size += len(chunk)
            entries.append({"key": key, "size": size, "sha256": digest.hexdigest()})
            context.progress(int(100 * n / len(keys)), f"{n}/{len(keys)} objects")
    display = inputs.get("display") or {}
    return {"name": display.get("friendlyName") or "manifest", "objects": entries,
            "count": len(entries), "totalBytes": sum(e["size"] for e in entries)}


S3_MANIFEST = Process(
    id="s3-manifest", version="1.0.0", title="S3 checksum manifest",
    description="Lists the objects under an S3 prefix with their sizes and SHA-256 checksums.",
    inputs={
        "type": "object", "additionalProperties": False,
        "properties": {
            "source": {"type": "string", "pattern": "^s3://[^/]+(/.*)?$"},
            "credentials": CREDENTIALS, "demo": DEMO, "display": DISPLAY,
            "resources": RESOURCES, "s3": S3,
        },
        "if": {"properties": {"demo": {"const": True}}, "required": ["demo"]},
        "else": {"required": ["source", "s3"]},
    },
    outputs={
        "type": "object", "required": ["objects", "count", "totalBytes"],
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"}, "totalBytes": {"type": "integer"},
            "objects": {"type": "array", "items": {
                "type": "object", "required": ["key", "size", "sha256"],
                "properties": {"key": {"type": "string"}, "size": {"type": "integer"},
                               "sha256": {"type": "string"}}}},
        },
    },
    entry="process_api.processes.s3_manifest:manifest", network=True,
)
