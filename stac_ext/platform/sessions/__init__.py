"""Browser sessions: the backend-for-frontend of OAuth 2.0 for browser-based apps.

The service signs a browser in itself (authorization code + PKCE, the code traded here),
keeps the tokens in PostgreSQL, sealed, where every API process finds them, and gives the
browser only an HttpOnly, SameSite cookie. A request carrying that cookie reaches the APIs
with the session's bearer token, as any client's does, so every rule stays the APIs'; an
unsafe one is taken only from this service's own pages (Fetch Metadata, else `Origin`).
Pages and STAC Browser share the one session: every tab, every reload, every link.

Of ours, imports identity (`auth`: the tokens are checked as the APIs check them) and the
plumbing (`service`).

Third-party imports: `asyncpg`, `fastapi`, `httpx`, `joserfc`, `pydantic`,
`pydantic_settings`, `starlette`.
"""

from pathlib import Path

#: The `sessions` schema's migrations (`geocatalog migrate` applies them).
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
