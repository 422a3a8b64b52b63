"""A search's request checked and bounded before it is folded into pgstac's body, for every
reading of it (GET, POST, an items page, an aggregation, a catalog's subtree): `intersects`
a geometry on the world, filters in CRS84, `limit` within MAX_PAGE_SIZE, `filter` bounded
(its literals written as pgstac reads them), `q` bounded, `sortby` sortable, `bbox` finite
and searched by its footprint."""

from __future__ import annotations

import math

from stac_fastapi.types.errors import InvalidQueryParameter

from stac_ext.data_api.geometries import GEOMETRY_TYPES
from stac_ext.data_api.search.filter_bounds import bounded_json
from stac_ext.data_api.search.filters import Search
from stac_ext.data_api.search.free_text import bounded_words
from stac_ext.data_api.search.literals import readable_literals
from stac_ext.data_api.search.text_filter import fold_text_filter
from stac_ext.data_api.search.world_bounds import crs84_only, footprint, within_world
from stac_ext.data_api.sortables import sortable_field


def checked(search: Search, max_page_size: int) -> Search:
    """The search as it is searched; a 400 (InvalidQueryParameter) naming what is wrong."""
    intersects = getattr(search, "intersects", None)
    if intersects is not None and getattr(intersects, "type", None) not in GEOMETRY_TYPES:
        raise InvalidQueryParameter("`intersects` must be a GeoJSON geometry: one of "
                                    + ", ".join(sorted(GEOMETRY_TYPES)))
    if intersects is not None:
        within_world(intersects)
    crs84_only(getattr(search, "filter_crs", None))
    limit = getattr(search, "limit", None)
    if limit is not None and limit > max_page_size:
        # a page holds MAX_PAGE_SIZE items at most, as stock crops GET's `limit` (to
        # 10,000): POST bodies too, whatever they ask
        search = search.model_copy(update={"limit": max_page_size})
    search = fold_text_filter(search)
    if (expression := getattr(search, "filter_expr", None)) is not None:
        bounded_json(expression)
        search = search.model_copy(update={"filter_expr": readable_literals(expression)})
    bounded_words(getattr(search, "q", None))
    for sort in getattr(search, "sortby", None) or ():
        sortable_field(sort.field)
    bbox = getattr(search, "bbox", None)
    if bbox is not None and not all(math.isfinite(float(v)) for v in bbox):
        raise InvalidQueryParameter("bbox: the coordinates must be finite numbers.")
    if bbox is not None and len(bbox) == 6:
        # a tuple, as the model holds a bbox (a list: pydantic warned as it serialized)
        search = search.model_copy(update={"bbox": tuple(footprint(bbox) or ())})
    return search
