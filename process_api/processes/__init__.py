"""Built-in processes: `echo`, `sleep`, and the SPEC-shaped `s3-manifest`.

Third-party imports: `aiohttp`, `jsonschema`, `pydantic`, `s3fs`.
"""

from process_api.processes.basic import ECHO, SLEEP
from process_api.processes.s3_manifest import S3_MANIFEST

BUILT_IN = [ECHO, SLEEP, S3_MANIFEST]

__all__ = ["BUILT_IN"]
