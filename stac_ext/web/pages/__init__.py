"""Our server-rendered pages, one router per resource: the landing page and conformance,
the sign-in callback, processes, jobs and catalogs. Reads go through `public_api`; writes
happen in the browser, through the APIs, with the user's token.

Third-party imports: `fastapi`.
"""
