"""geocatalog's data API and composition root.

Owns: the composition root (`app`, `settings`, `cli`), the root app's plumbing
(`service/`), the `/data` STAC API (`data_api/`: stock stac-fastapi-pgstac plus our item,
collection and search rules), generated content (`content/`), identity (`auth/`), the
publish-dataset process (`publish/`) and the database lifecycle (`database/`).
May import `catalogs_ext` and `process_api` (it wires them); they never import it.
"""
