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

CREATE OR REPLACE FUNCTION geocatalog.stored_item(_collection text, _id text, _reader jsonb)
RETURNS text
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    found_item text;
    properties jsonb;
BEGIN
    EXECUTE format('SELECT content_nonhydrated(i)::text, i.content->''properties'' '
                   'FROM items i WHERE i.collection = %L AND i.id = %L', _collection, _id)
        INTO found_item, properties;
    IF found_item IS NULL OR geocatalog.item_readers(properties) IS NULL
            OR geocatalog.may_read(properties, _reader) THEN
        RETURN found_item;
    END IF;
    RETURN NULL;
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
