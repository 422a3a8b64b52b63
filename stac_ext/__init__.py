"""geocatalog's data API and composition root.

Owns: the composition root (`app`, `settings`, `cli`), the root app's plumbing
(`service/`), the `/data` STAC API (`data_api/`: stock stac-fastapi-pgstac plus our item,
collection and search rules), generated content (`content/`), identity (`auth/`), the
publish-dataset process (`publish/`) and the database lifecycle (`database/`).
May import `catalogs_ext` and `process_api` (it wires them); they never import it.
"""

import logging


class _StockImportDefaults(logging.Filter):
    """Stock stac-fastapi builds settings of its own from the environment when imported
    and warns that their title and version are its defaults; geocatalog never uses that
    instance (its clients are handed ours), so the warning would be false."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Using default values for stac_fastapi_")


logging.getLogger("stac_fastapi.types.config").addFilter(_StockImportDefaults())
