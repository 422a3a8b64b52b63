"""The built-in processes, as a deployment offers them (`registry`)."""

from __future__ import annotations

from process_api.processes.basic import ECHO, SLEEP
from process_api.processes.s3_manifest import S3_MANIFEST

BUILT_IN = [ECHO, SLEEP, S3_MANIFEST]
