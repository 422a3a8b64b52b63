"""What the tests share: a real token issuer, STAC documents, HTTP clients and servers,
test processes and job helpers, and a real S3 server's client. Test modules import from
here, never from each other; pytest fixtures live in `tests/conftest.py`."""
