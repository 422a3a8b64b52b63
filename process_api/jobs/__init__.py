"""The job engine: procrastinate's queue on the same PostgreSQL, the workers, the job
records and their logs, quotas, callbacks, secret inputs and resource ceilings. Starts each
job through the runner (`runner`); knows no HTTP.

Third-party imports: `httpx`, `joserfc`, `jsonschema`, `opentelemetry`, `procrastinate`,
`prometheus_client`, `prov`, `psycopg`, `psycopg_pool`, `rocrate`.
"""
