"""A job's data: file inputs given by reference to the catalog or to storage, staged in by
the worker and out of the sandbox, the results store, and the job's provenance (PROV,
RO-Crate).

Third-party imports: `aiohttp`, `fsspec`.
"""
