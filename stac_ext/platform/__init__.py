"""The platform beneath every API and feature: the service's HTTP plumbing and the table
of error answers (`service`), identity (`auth`), what an operator watches (`telemetry`) and
the database's lifecycle (`database`).

Imports nothing above it (the APIs, the features, the composition root), which import it:
`catalogs_ext` and `process_api` as much as `stac_ext`'s own.

Third-party imports: none.
"""
