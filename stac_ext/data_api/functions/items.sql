-- Single items: read as the caller, delete and update through the index.

CREATE OR REPLACE FUNCTION geocatalog.get_item(_collection text, _id text) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    found_item jsonb;
BEGIN
    EXECUTE format('SELECT content_hydrate(i) FROM items i '
                   'WHERE i.collection = %L AND i.id = %L', _collection, _id)
        INTO found_item;
    RETURN found_item;
END;
$$;

-- pgstac's delete_item and update_item, on the item's partition only.
CREATE OR REPLACE FUNCTION geocatalog.delete_item(_collection text, _id text) RETURNS void
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
DECLARE
    deleted int;
BEGIN
    EXECUTE format('DELETE FROM items WHERE collection = %L AND id = %L', _collection, _id);
    GET DIAGNOSTICS deleted = ROW_COUNT;
    IF deleted <> 1 THEN
        RAISE EXCEPTION 'query returned no rows' USING ERRCODE = 'no_data_found';
    END IF;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.update_item(content jsonb) RETURNS void
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
BEGIN
    PERFORM geocatalog.delete_item(content->>'collection', content->>'id');
    PERFORM create_item(content);
END;
$$;

-- An item as pgstac's `content_nonhydrated(i)` renders it (its base item beside it), if
-- `_reader` may read it. The same answer without its cost: pgstac's function finds the
-- base item through an SQL function that cannot be inlined (planned again at each call)
-- and sets up its plpgsql expressions in each transaction; these statements keep their
-- plans for the session (a call: 242 -> 162 us). The base item is the one pgstac's
-- `collection_base_item` finds: an untagged item's is the collection's first (the one it
-- had before its first edit), a tagged item's the one its tag names. A tag naming none is
-- left to pgstac's own function (its warning, then the collection's current base item).
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

-- One item hydrated, if `_reader` may read it (generated content's pages).
CREATE OR REPLACE FUNCTION geocatalog.read_item(_collection text, _id text, _reader jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    found_item jsonb;
BEGIN
    EXECUTE format('SELECT content_hydrate(i) FROM items i '
                   'WHERE i.collection = %L AND i.id = %L', _collection, _id)
        INTO found_item;
    IF found_item IS NULL OR geocatalog.may_read(found_item->'properties', _reader) THEN
        RETURN found_item;
    END IF;
    RETURN NULL;
END;
$$;
