"""Collections governed by the community: the conventions' vocabularies (the CF Standard
Name Table shipped by `compliance-checker`, and any convention's table an admin loads),
collections checked against them and filled from them (`collection_rule`), and community
proposals of collections and descriptions that administrators accept or reject, with the
items that wait for them (`/data/proposals`).

Of ours, imports the data API (its item writers, named SQL, policy), `catalogs_ext`'s
public exports (links of released items) and the platform; the composition root hands the
data API the collection rule and registers the proposals routes; publishing holds items in
proposals (`Proposals.hold`).

Third-party imports: `asyncpg`, `attr`, `fastapi`, `psycopg`, `pydantic`, `pydantic_settings`,
`stac_fastapi`.
"""

from pathlib import Path

#: Its SQL (schema `governance`: vocabularies, proposals, held items).
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: The proposals' key in the data API's extension map (`ENABLED_EXTENSIONS`).
PROPOSALS = "proposals"
