"""Subscriptions to searches (`/data/subscriptions`): a user's saved search, whose items
created, updated and deleted (that she may read) are announced as CloudEvents in her feed
and to her webhook, signed; and standing jobs, a process run as her on each window of new
items, its results published with their lineage. Matched from the data API's transactional
outbox (`geocatalog.item_events`) by the service's processes (`dispatcher`).

A feature: imports the data API (its URLs, its reader key, its filter bounds), the
platform, and `process_api`'s public exports (the outbound policy, secret inputs); the
process API is reached through its HTTP endpoints, in-process, as the subscription's
owner (`service_calls`). Its SQL is the schema `subscriptions` (migrations/, functions/).

Third-party imports: `asyncpg`, `attr`, `fastapi`, `httpx`, `jsonschema`, `orjson`,
`pydantic`, `pydantic_settings`, `stac_fastapi`, `starlette`.
"""

from pathlib import Path

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: Its SQL functions, one source per concern (applied again when one changes).
FUNCTIONS_DIR = Path(__file__).parent / "functions"
