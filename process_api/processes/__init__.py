"""Built-in processes: `echo`, `sleep`, and `s3-manifest` (with the credentials, S3 and
resources sections).

Third-party imports: `aiohttp`, `jsonschema`, `pydantic`, `pydantic_settings`, `s3fs`.
"""

from process_api.processes.basic import ECHO, SLEEP
from process_api.processes.s3_manifest import S3_MANIFEST

BUILT_IN = [ECHO, SLEEP, S3_MANIFEST]

__all__ = ["BUILT_IN"]
