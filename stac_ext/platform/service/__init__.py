"""The root app's HTTP plumbing: landing page and health, the table of error answers and both
APIs' error bodies (STAC's and OGC's), OpenAPI completion, the body-size limit, the public
base URL, and secrets in the data dir.

The platform's lowest layer: imports nothing else of ours (the composition root hands
`landing` the database's readiness check).

Third-party imports: `asyncpg`, `fastapi`, `orjson`, `pydantic`, `pydantic_settings`,
`stac_fastapi`, `starlette`.
"""
