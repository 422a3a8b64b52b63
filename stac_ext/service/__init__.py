"""The root app's HTTP plumbing: landing page and health, error bodies, OpenAPI
completion, the body-size limit, the public base URL, and secrets in the data dir.

May import FastAPI/Starlette, stac-fastapi's error types, `process_api`'s public exports
(for its error body) and the standard library; nothing else of `stac_ext` (the composition
root hands `landing` the database's readiness check). Checked by import-linter.
"""
