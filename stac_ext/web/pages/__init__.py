"""Our server-rendered pages, one router per resource: the landing page and conformance,
processes, jobs (and a job's provenance), search and catalogs. Reads go through
`public_api`; writes happen in the browser, through the APIs, with the user's sign-in.

Third-party imports: `fastapi`.
"""
