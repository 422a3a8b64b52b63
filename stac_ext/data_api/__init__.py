"""The `/data` STAC API: stock stac-fastapi-pgstac with our read client (`read_client`),
write clients and routes (`write_client`, `write_routes`; single-item POSTs written together
while others are in flight, by the platform's group commit), stock's code we copy
(`stock`: its `StacApi` composition, endpoints that build request models in the event
loop), its settings with ours (`settings`), the rules every item write follows
(`item_rules`: what an item is; `item_writers`: who may write which id, under its lock;
`policy`: the caller), item links and URLs, items kept as served (`rendered_items`),
request bodies, named SQL and its schema (`migrations/`), the search extensions
(`search/`), what finding data adds to them (`aggregation`: counts and facets of a search;
`sortables`; `queryables`), and the pages our own conformance URIs resolve to (`spec_pages`).

Of ours, imports the platform only: the content decorator and the other APIs reach it
through the composition root.

Third-party imports: `asyncpg`, `attr`, `brotli_asgi`, `fastapi`, `httpx`, `hydraters`,
`json_merge_patch`, `jsonpatch`, `jsonpointer`, `numpy`, `orjson`, `pydantic`,
`pydantic_settings`, `pypgstac`, `shapely`, `stac_fastapi`, `stac_pydantic`, `starlette`.
"""

from pathlib import Path

#: The data API's SQL (schema `geocatalog`: the search index, search, visibility).
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: Its SQL functions, one source per concern (applied again when one changes).
FUNCTIONS_DIR = Path(__file__).parent / "functions"
