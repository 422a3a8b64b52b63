"""The data API's settings: stock stac-fastapi-pgstac's own (every stock variable keeps
working: `ENABLED_EXTENSIONS`, `CORS_ORIGINS`, `INVALID_ID_CHARS`, ...) with our defaults
and what our read and write paths add."""

from __future__ import annotations

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict
from stac_fastapi.pgstac.config import Settings as PgstacApiSettings

from stac_ext.platform.service.settings import CommaSeparated, comma_separated

__all__ = ["CATALOG_TREE", "HTML", "PYTHON_EXAMPLE", "CommaSeparated", "DataApiSettings",
           "comma_separated"]

#: Keys of our extensions in stock's `extra_map`, for `ENABLED_EXTENSIONS` (besides stock's
#: keys and our search ones, `owner` and `single_value_lists`).
CATALOG_TREE = "catalog_tree"
PYTHON_EXAMPLE = "python_example"
HTML = "html"
EXPLORER = "explorer"


class DataApiSettings(PgstacApiSettings):
    """Data API"""

    # stock reads a `.env` file and keeps unknown variables; we read the environment only
    model_config = SettingsConfigDict(env_file=None, extra="ignore",
                                      use_attribute_docstrings=True)

    stac_fastapi_title: str = "geocatalog"
    """Stock stac-fastapi's landing page title."""
    stac_fastapi_description: str = "Geospatial data catalog (STAC API / OGC API Features)"
    """Stock stac-fastapi's landing page description."""
    stac_fastapi_landing_id: str = "geocatalog"
    """Stock stac-fastapi's landing page id."""
    stac_fastapi_version: str = "0.1.0"
    """The version the landing page states."""
    prefix_path: str = "/data"
    """Where the data API is mounted."""
    openapi_url: str = "/data/api"
    """The data API's OpenAPI document."""
    docs_url: str = "/data/api.html"
    """The data API's documentation page (Swagger UI)."""
    enable_transactions_extensions: bool = True
    """Item and collection writes (stock's transaction extensions), on in this service."""
    use_api_hydrate: bool = True
    """Items are merged with their collection's base item in the API (pypgstac's merge), not
    in pgstac's PL/pgSQL (stock's default): most of the database time of a 100-item
    page."""
    rendered_items_mb: int = Field(default=16, ge=0)
    """MiB per API process of items kept as served, by the text pgstac stores them as (so
    never stale); `0`: every item rendered on every read."""
    owner_search: bool = True
    """The `owner` search parameter; off only to measure what it costs."""
    aggregation_properties: CommaSeparated = Field(
        default_factory=lambda: ["platform", "owner"])
    """Item properties counted by value in `/aggregate` (each `<property>_frequency`,
    beside the counts by collection and by time), comma-separated: the facets offered."""
    aggregate_exact_up_to: int = Field(default=2_000, ge=0)
    """Matches an aggregation with criteria counts exactly, about: a search matching more
    is counted from a sample of the search index (one item in 10, 100 or 1,000), each of
    its aggregations marked `"approximate": true`."""
    max_page_size: int = 10_000
    """Items per page at most: a larger `limit` is cropped to it."""

    @model_validator(mode="after")
    def _one_catalogs_extension(self) -> DataApiSettings:
        tree_on = self.enabled_extensions is None or CATALOG_TREE in self.enabled_extensions
        if self.enable_catalogs_extension and tree_on:
            raise ValueError(
                "ENABLE_CATALOGS_EXTENSION=true mounts stock's catalogs extension on "
                "/data/catalogs, where geocatalog's catalogs tree is: leave it unset (or "
                f"leave `{CATALOG_TREE}` out of ENABLED_EXTENSIONS)")
        return self
