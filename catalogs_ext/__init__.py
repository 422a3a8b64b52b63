"""The nested `/data/catalogs` tree, as a stac-fastapi ApiExtension with its own SQL schema,
and the generated `variables` tree in it (`families`: collections by family of their
standard names, by rules an administrator may change).

Of ours, imports the platform only; never the data API or `process_api`: the composition
root hands it the writer dependency and the rights checks (`CatalogAccess`), where the data
API serves collections and items (`DataPaths`), and the database pools through
stac-fastapi's `get_connection`.

Third-party imports: `asyncpg`, `attr`, `fastapi`, `orjson`, `pydantic`, `stac_fastapi`,
`starlette`.
"""

from pathlib import Path

from catalogs_ext.access import CatalogAccess
from catalogs_ext.documents import DataPaths
from catalogs_ext.extension import CONFORMANCE, SPEC, CatalogTreeExtension
from catalogs_ext.families import FAMILIES_ID, SHIPPED_RULES
from catalogs_ext.linking import (
    CatalogRefused,
    catalog_for_items,
    link_items,
    link_refusal,
    may_link,
    not_yours,
)
from catalogs_ext.models import CATALOG_PATH
from catalogs_ext.queries import SUBTREE_BODY, UNLINK_ITEM
from catalogs_ext.search import SubtreeSearch

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: Its SQL functions, one source per concern (applied again when one changes).
FUNCTIONS_DIR = Path(__file__).parent / "functions"

__all__ = [
    "CATALOG_PATH",
    "CONFORMANCE",
    "FAMILIES_ID",
    "FUNCTIONS_DIR",
    "MIGRATIONS_DIR",
    "SHIPPED_RULES",
    "SPEC",
    "SUBTREE_BODY",
    "UNLINK_ITEM",
    "CatalogAccess",
    "CatalogRefused",
    "CatalogTreeExtension",
    "DataPaths",
    "SubtreeSearch",
    "catalog_for_items",
    "link_items",
    "link_refusal",
    "may_link",
    "not_yours",
]
