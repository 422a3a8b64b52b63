"""Search extensions of `/data/search` and the items pages, each an ApiExtension without
routes that stock merges into its request models: `owner`, the Query extension's full
operator list, single strings for id lists, a POST body's filter in CQL2 text; the filter
composition they share; a `bbox` across the antimeridian as the two boxes it is.

Third-party imports: `attr`, `cql2`, `fastapi`, `orjson`, `pydantic`, `stac_fastapi`.
"""
