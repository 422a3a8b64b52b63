"""JSON Schema sections shared by processes: the job's resources, S3 access, credentials."""

from __future__ import annotations

from typing import Any

from process_api.processes.resources import CPU_PATTERN, MEMORY_PATTERN

CPU = {"type": "string", "pattern": CPU_PATTERN,
       "description": "Kubernetes CPU quantity: `2`, `0.5`, `500m`"}
MEMORY = {"type": "string", "pattern": MEMORY_PATTERN,
          "description": "Kubernetes memory quantity: `512Mi`, `4Gi`, `1G`"}
_QUANTITIES = {"type": "object", "additionalProperties": False,
               "properties": {"cpu": CPU, "memory": MEMORY}}

RESOURCES: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "description": "`limits` are enforced on the job's process; `requests` must fit a worker.",
    "properties": {"limits": _QUANTITIES, "requests": _QUANTITIES},
}

SECRET = {"type": "string", "writeOnly": True, "format": "password"}

S3: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "description": "Access to the caller's S3-compatible object storage.",
    "properties": {
        "accessKeyId": {"type": "string"},
        "secretAccessKey": SECRET,
        "sessionToken": SECRET,
        "defaultRegion": {"type": "string"},
        "endpoint": {"type": "string", "format": "uri"},
        "enabled": {"type": "boolean", "default": True},
    },
}

CREDENTIALS: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "description": "Credentials of an external data provider.",
    "properties": {"username": {"type": "string"}, "password": SECRET},
}

DISPLAY: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {"friendlyName": {"type": "string", "maxLength": 200},
                   "share": {"type": "boolean", "default": False}},
}

DEMO = {"type": "boolean", "default": False,
        "description": "Run on a small built-in sample instead of the caller's data."}
