-- Items: read as the caller (one read of an item by its key: `stored_item`), written
-- without pgstac's staging table (created, upserted), deleted and updated on the item's
-- partition.

-- pgstac's delete_item and update_item, on the item's partition only (no such item: as
-- pgstac's, no_data_found "query returned no rows", which STRICT raises).
CREATE OR REPLACE FUNCTION geocatalog.delete_item(_collection text, _id text) RETURNS void
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
DECLARE
    deleted text;
BEGIN
    EXECUTE format('DELETE FROM items WHERE collection = %L AND id = %L RETURNING id',
                   _collection, _id) INTO STRICT deleted;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.update_item(content jsonb) RETURNS void
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
BEGIN
    PERFORM geocatalog.delete_item(content->>'collection', content->>'id');
    PERFORM geocatalog.create_items(jsonb_build_array(content));
END;
$$;

-- Items written as pgstac's create_items and upsert_items store them, without its staging
-- table. pgstac's own path inserts each statement's items into `items_staging`, copies
-- them into a temporary table it creates (a catalog write per statement) and deletes them
-- there again, and its SQL functions (`content_dehydrate`, `content_slim`, `strip_jsonb`
-- at each level of each item) are planned again at every call; these statements keep their
-- plans for the session (docs/performance.md). `test_item_creation.py` compares the rows
-- with pgstac's.

-- The items as the rows pgstac stores, as its `content_dehydrate` makes them: each
-- collection's current base item looked up once, not once an item (an item naming no
-- collection is kept as it is, and fails as in pgstac, finding no partition). A single
-- query, so the planner inlines it into the statement that reads it.
CREATE OR REPLACE FUNCTION geocatalog.dehydrated(_items jsonb) RETURNS SETOF pgstac.items
LANGUAGE sql STABLE AS $$
    SELECT i->>'id', pgstac.stac_geom(i), i->>'collection', pgstac.stac_datetime(i),
           pgstac.stac_end_datetime(i),
           (geocatalog.strip_jsonb(i - '{id,geometry,collection,type,pgstac:base_item}'::text[],
                                   b.base_item) - '{id,geometry,collection,type}'::text[])
           || jsonb_strip_nulls(jsonb_build_object('pgstac:base_item', b.base_item_id)),
           NULL::jsonb
    FROM jsonb_array_elements(_items) AS i
    LEFT JOIN (SELECT c.collection, b.base_item, b.base_item_id
               FROM (SELECT DISTINCT x->>'collection' AS collection
                     FROM jsonb_array_elements(_items) AS x) AS c,
                    LATERAL pgstac.current_base_item(c.collection) AS b) AS b
      ON b.collection = i->>'collection'
$$;

-- pgstac's create_items: how many written (an id stored already fails the whole).
CREATE OR REPLACE FUNCTION geocatalog.create_items(_items jsonb) RETURNS bigint
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
DECLARE
    written bigint;
BEGIN
    PERFORM geocatalog.check_partitions(_items);
    INSERT INTO items SELECT * FROM geocatalog.dehydrated(_items);
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
END;
$$;

-- pgstac's upsert_items: an item stored already is replaced if it differs and left as it
-- is (no write) if not.
CREATE OR REPLACE FUNCTION geocatalog.upsert_items(_items jsonb) RETURNS void
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
DECLARE
    rows items[];
BEGIN
    PERFORM geocatalog.check_partitions(_items);
    rows := ARRAY(SELECT d FROM geocatalog.dehydrated(_items) AS d);
    DELETE FROM items AS i USING unnest(rows) AS s
    WHERE i.id = s.id AND i.collection = s.collection AND i IS DISTINCT FROM s;
    INSERT INTO items SELECT * FROM unnest(rows) ON CONFLICT DO NOTHING;
END;
$$;

-- pgstac's strip_jsonb (an item's value less what its base item holds: equal values
-- dropped, a value the item lacks marked so that hydration leaves it out), in plpgsql,
-- whose statements keep their plans for the session: pgstac's SQL function is planned
-- again at each call, once for each value of each item.
CREATE OR REPLACE FUNCTION geocatalog.strip_jsonb(_a jsonb, _b jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    stripped jsonb;
BEGIN
    IF (_a IS NULL OR jsonb_typeof(_a) = 'null') AND _b IS NOT NULL
            AND jsonb_typeof(_b) <> 'null' THEN
        RETURN '"𒍟※"';  -- pgstac's do-not-merge marker
    ELSIF _b IS NULL OR jsonb_typeof(_a) = 'null' THEN
        RETURN _a;
    ELSIF _a = _b AND jsonb_typeof(_a) = 'object' THEN
        RETURN '{}';
    ELSIF _a = _b THEN
        RETURN NULL;
    ELSIF jsonb_typeof(_a) = 'object' AND jsonb_typeof(_b) = 'object' THEN
        SELECT jsonb_strip_nulls(jsonb_object_agg(key, geocatalog.strip_jsonb(a.value, b.value)))
        INTO stripped
        FROM jsonb_each(_a) AS a FULL JOIN jsonb_each(_b) AS b USING (key);
        RETURN stripped;
    ELSIF jsonb_typeof(_a) = 'array' AND jsonb_typeof(_b) = 'array'
            AND jsonb_array_length(_a) = jsonb_array_length(_b) THEN
        SELECT jsonb_agg(m) INTO stripped
        FROM (SELECT geocatalog.strip_jsonb(jsonb_array_elements(_a),
                                            jsonb_array_elements(_b)) AS m) AS l;
        RETURN stripped;
    END IF;
    RETURN _a;
END;
$$;

-- The one read of an item by its key: the item as pgstac's `content_nonhydrated(i)`
-- renders it (its base item beside it), if `_reader` may read it (else NULL, as for a
-- missing one); the API hydrates it (`item_reads`). The same answer without its cost:
-- pgstac's function finds the base item through an SQL function that cannot be inlined
-- (planned again at each call) and sets up its plpgsql expressions in each transaction;
-- these statements keep their plans for the session (docs/performance.md). The base item
-- is the one pgstac's `collection_base_item` finds: an untagged item's is the collection's
-- first (the one it had before its first edit), a tagged item's the one its tag names. A
-- tag naming none is left to pgstac's own function (its warning, then the collection's
-- current base item).
-- `test_hydration.py` compares the two on each kind of item.
CREATE OR REPLACE FUNCTION geocatalog.stored_item(_collection text, _id text, _reader jsonb)
RETURNS text
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    stored items;
    tag text;
    base jsonb;
BEGIN
    EXECUTE format('SELECT * FROM items WHERE collection = %L AND id = %L', _collection, _id)
        INTO stored;
    IF stored.id IS NULL OR NOT geocatalog.may_read(stored.content->'properties', _reader) THEN
        RETURN NULL;
    END IF;
    tag := stored.content->>'pgstac:base_item';
    IF tag IS NULL THEN
        SELECT b.base_item INTO base FROM base_items b
        WHERE b.collection = _collection ORDER BY b.id LIMIT 1;
        IF base IS NULL THEN
            SELECT c.base_item INTO base FROM collections c WHERE c.id = _collection;
        END IF;
    ELSIF tag ~ '^\s*\d{1,9}\s*$' THEN
        SELECT b.base_item INTO base FROM base_items b
        WHERE b.collection = _collection AND b.id = tag::int;
    END IF;
    IF base IS NULL AND tag IS NOT NULL THEN
        RETURN content_nonhydrated(stored)::text;
    END IF;
    RETURN (jsonb_build_object('id', stored.id,
                               'geometry', ST_AsGeoJSON(stored.geometry, 20)::jsonb,
                               'collection', stored.collection, 'type', 'Feature')
            || stored.content || jsonb_build_object('pgstac:base_item', base))::text;
END;
$$;

-- Which of the given items exist (the search index has every item's key, in one table
-- whatever the number of partitions): for what outlives a job only while an item uses it.
CREATE OR REPLACE FUNCTION geocatalog.existing_items(_collections text[], _ids text[])
RETURNS TABLE (collection text, id text)
LANGUAGE sql STABLE AS $$
    SELECT s.collection, s.id
    FROM unnest(_collections, _ids) AS asked (collection, id)
    JOIN geocatalog.search_items s ON s.id = asked.id AND s.collection = asked.collection
$$;
