"""geocatalog's data API and composition root.

Owns: settings, authentication, the `/data` STAC API (stock stac-fastapi-pgstac plus our
item, collection and search rules), the root ASGI app, the CLI and the database lifecycle.
May import `catalogs_ext` and `process_api` (it wires them); they never import it.
"""
