"""The nested `/data/catalogs` tree, as a stac-fastapi ApiExtension with its own SQL schema.

May import stac-fastapi, FastAPI, asyncpg and the standard library; never `stac_ext` or
`process_api`: the composition root hands it the writer dependency and the rights checks
(`CatalogAccess`), and the database pools through stac-fastapi's `get_connection`.
"""

from pathlib import Path

from catalogs_ext.extension import CONFORMANCE, CatalogAccess, CatalogsExtension
from catalogs_ext.queries import UNLINK_ITEM

MIGRATIONS_DIR = Path(__file__).parent / "migrations"

__all__ = ["CONFORMANCE", "MIGRATIONS_DIR", "UNLINK_ITEM", "CatalogAccess",
           "CatalogsExtension"]
