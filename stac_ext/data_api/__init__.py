"""The `/data` STAC API: stock stac-fastapi-pgstac with our read client (`read_client`),
write clients and routes (`write_client`, `write_routes`; single-item POSTs written together
while others are in flight, by `stac_ext.database.group_commit`), stock's code we copy
(`stock`: its `StacApi` composition, endpoints that build request models in the event
loop), its settings with ours (`settings`), the rules
every item write follows (`item_rules`: what an item is; `item_writers`: who may write which
id, under its lock; `policy`: the caller), item links and URLs, items kept as
served (`rendered_items`), request bodies, named SQL, the search extensions (`search/`),
what finding data adds to them (`aggregation`: counts and facets of a search; `sortables`),
and the pages our own conformance URIs resolve to (`spec_pages`).

May import stac-fastapi, pgstac's clients, `stac_ext.auth`, `stac_ext.service` and
`stac_ext.database.group_commit`; never `stac_ext.content` (it hands the data API its
decorator through the composition root), `catalogs_ext` or `process_api` (the composition
root wires them). Checked by import-linter (pyproject.toml).
"""
