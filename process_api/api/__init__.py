"""The process API over HTTP (OGC API Processes Parts 1 and 2): the FastAPI sub-app, its
routes, documents, error bodies, request models and the typed object the routes ask of the
job engine (`service`). Imports the engine (`jobs`), deployment and the processes; nothing
imports it but the package's exports.

Third-party imports: `fastapi`, `jsonschema`, `psycopg`, `pydantic`.
"""
