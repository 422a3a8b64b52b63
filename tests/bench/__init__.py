"""`make bench`: geocatalog against stock stac-fastapi-pgstac on one seeded database.

Owns the synthetic data set, the servers under test, the wrk load driver and the report.
May import `stac_ext` (cluster, migrations, loader, local issuer) and the Python standard
library; never imported by the service or by `make test` (pytest skips `tests/bench`).
"""
