"""Deployed processes (OGC API Processes Part 2): CWL application packages, read and
checked in a sandbox of their own (`package_check`), stored (`deployed`) and run in their
job's process (`cwl_run`).

Third-party imports: `cwl_utils`, `cwltool`, `psycopg`, `psycopg_pool`, `ruamel`, `schema_salad`.
"""
