"""Named SQL of the data API (the rest goes through pgstac's own functions).

Items are read through geocatalog's search index and functions (migrations 004, 005), which
name a collection's partition by literal: a parameterised statement on pgstac.items would
plan, and lock, every partition once PostgreSQL makes its plan generic.
"""

COLLECTION_EXISTS = "SELECT EXISTS (SELECT 1 FROM pgstac.collections WHERE id = $1)"

COLLECTION_HAS_ITEMS = (
    "SELECT EXISTS (SELECT 1 FROM geocatalog.populated_collections WHERE collection = $1)"
)


#: The catalog's queryables while it holds no collection (pgstac's `get_queryables` answers
#: NULL then): its own, as pgstac writes them, as JSON text.
CATALOG_QUERYABLES = """
SELECT jsonb_build_object(
    '$schema', 'http://json-schema.org/draft-07/schema#', '$id', '', 'type', 'object',
    'title', 'STAC Queryables.',
    'properties', coalesce(jsonb_object_agg(name, coalesce(definition, '{"type": "string"}')),
                           '{}'),
    'additionalProperties', pgstac.additional_properties())::text
FROM pgstac.queryables WHERE collection_ids IS NULL
"""

#: The one read of an item by its key (`item_reads`): as `search()` renders it without
#: hydration (its base item beside it), as JSON text (as the items of `PAGE`): $1
#: collection id, $2 item id; NULL unless the reader ($3, JSON: `DataPolicy.reader`) may
#: read it.
STORED_ITEM = "SELECT geocatalog.stored_item($1, $2, $3::text::jsonb)"

#: Owner and creation time of existing items, for bulk upserts, from the search index (kept
#: in the writing transaction: it is pgstac.items'). Both are per-item properties, never
#: part of a collection's base item.
ITEM_OWNERS = """
SELECT id, owner, content->'properties'->>'created' AS created
FROM geocatalog.search_items
WHERE collection = $1 AND id = ANY($2::text[])
"""

#: Every writer of items (single, bulk, publishing) takes these in the transaction that
#: reads the items' owners and writes: checks and writes of one id never interleave.
#: $1 collection id, $2 item ids; sorted, so two writers never wait on each other in turn.
_LOCKED = """
WITH locked AS (SELECT count(pg_advisory_xact_lock(key)) FROM (
    SELECT DISTINCT hashtextextended($1 || '/' || id, 0) AS key
    FROM unnest($2::text[]) AS id ORDER BY key) AS keys)
"""
LOCK_ITEM_IDS = _LOCKED + "SELECT 1 FROM locked"
#: A POST's write in one statement (its own transaction), after the ids' locks and only
#: if the collection exists (one round trip for both): 1 when written, 0 when there is no
#: such collection. $3 the array of items as JSON (functions/items.sql: pgstac's
#: `create_items` without its staging table).
CREATE_ITEMS = _LOCKED + """, known AS (SELECT 1 FROM pgstac.collections WHERE id = $1)
SELECT count(geocatalog.create_items($3::text::jsonb)) FROM locked, known
"""

#: pgstac's delete_item and update_item, on the item's partition: $1 collection, $2 item id;
#: $1 the item as JSON text.
DELETE_ITEM = "SELECT geocatalog.delete_item($1, $2)"
UPDATE_ITEM = "SELECT geocatalog.update_item($1::text::jsonb)"

UPSERT_ITEMS = "SELECT geocatalog.upsert_items($1::text::jsonb)"

CREATE_COLLECTION = "SELECT pgstac.create_collection($1::text::jsonb)"

UPDATE_COLLECTION = "SELECT pgstac.update_collection($1::text::jsonb)"

GET_COLLECTION = "SELECT pgstac.get_collection($1)"

#: Item search (items pages, GET/POST /search), pgstac's answers over the search index: $1
#: the search body as JSON text.
SEARCH = "SELECT geocatalog.search($1::text::jsonb)"


def search_of(body: str) -> str:
    """The search of a body given as an SQL expression (e.g. a catalog's scope of $1)."""
    return f"SELECT geocatalog.search({body})"

#: The page of a search statement (one that answers the page, or NULL), split in two: the
#: page without its items, and its items in order, each as JSON text (the read client
#: keeps items rendered by their text). Formatted with the statement as `search`.
#: MATERIALIZED: a STABLE search (a catalog's) would otherwise run once per use of `page`.
PAGE = """
WITH s(page) AS MATERIALIZED ({search})
SELECT (page - 'features')::text,
       (SELECT array_agg(item::text ORDER BY n)
        FROM jsonb_array_elements(page->'features') WITH ORDINALITY AS f(item, n))
FROM s
"""

#: The aggregations of a search (migration 008): $1 the search body as JSON text, $2 the
#: aggregations' names, $3 term buckets at most; as JSON text.
AGGREGATE = "SELECT geocatalog.aggregate($1::text::jsonb, $2::text[], $3, $4)::text"
