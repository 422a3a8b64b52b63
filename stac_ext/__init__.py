"""geocatalog's composition root, the data API and its features, and the platform beneath.

Owns, by layer: the composition root (`app`, `settings`, `migration_sets`, `cli`), which
alone wires every package; the features (`publish`: the publish-dataset process and a
job's results; `content`: generated content) and the `/data` STAC API (`data_api/`), peers
of `catalogs_ext` and `process_api`, with the web face (`web`); and the platform
(`platform/`: service plumbing, identity, telemetry, the database), which every other
package may import. The layers are import-linter contracts (pyproject.toml).

Third-party imports: `fastapi`, `opentelemetry`, `pydantic_settings`.
"""

import logging


class _StockImportDefaults(logging.Filter):
    """Stock stac-fastapi builds settings of its own from the environment when imported
    and warns that their title and version are its defaults; geocatalog never uses that
    instance (its clients are handed ours), so the warning would be false."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Using default values for stac_fastapi_")


logging.getLogger("stac_fastapi.types.config").addFilter(_StockImportDefaults())
