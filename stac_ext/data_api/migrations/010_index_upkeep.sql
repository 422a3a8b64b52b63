-- The search index's upkeep made cheaper for bulk loads, with the same rows: a load of a
-- million items into 5,000 collections writes each index row in the transaction of its
-- item, and makes each partition's triggers as pgstac makes the partition (measured in
-- docs/performance.md).
--
-- - A statement's items share their collection (pypgstac writes one partition a statement):
--   the collection's words are made once per collection, not once per item. An item's words
--   stay item_words(): its own words, then its collection's (tsvector || is associative).
-- - The foreign key from the index to pgstac.collections checked each row written (a tenth
--   of a row's cost). pgstac.items holds only items of existing collections, so the index
--   can hold no other: what the key did on a collection's deletion, a trigger does.
-- - A partition pgstac has just made is empty: its triggers are made, and nothing is copied.
-- - The markers' and spans' writers are plpgsql (a session keeps their plans; an SQL
--   function's statement was planned again at each call, once per partition written).
-- - The index's two writers were copies of one upsert: they are made from one body.

-- The words of an item without those of its collection (a field it lacks adds none).
CREATE FUNCTION geocatalog.own_words(properties jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('english'::regconfig, coalesce(properties->>'title', ''))
        || to_tsvector('english'::regconfig, coalesce(properties->>'keywords', ''))
        || to_tsvector('english'::regconfig, coalesce(properties->>'description', ''))
$$;

-- The words of a collection, added to each of its items': its id's (cf-sea_water_salinity:
-- the variable's standard name) and its title's.
CREATE FUNCTION geocatalog.collection_words(collection text, collection_title text)
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('english'::regconfig, translate(collection, '_-', '  '))
        || to_tsvector('english'::regconfig, coalesce(collection_title, ''))
$$;

CREATE OR REPLACE FUNCTION geocatalog.item_words(properties jsonb, collection text,
                                                 collection_title text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT geocatalog.own_words(properties)
        || geocatalog.collection_words(collection, collection_title)
$$;

CREATE OR REPLACE FUNCTION geocatalog.note_spans(_spans jsonb) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO geocatalog.item_spans (collection, span)
    SELECT n.collection, n.span::interval FROM jsonb_each_text(_spans) n(collection, span)
    WHERE NOT EXISTS (SELECT 1 FROM geocatalog.item_spans s
                      WHERE s.collection = n.collection AND s.span >= n.span::interval)
    ON CONFLICT (collection) DO UPDATE SET span = greatest(geocatalog.item_spans.span,
                                                           EXCLUDED.span);
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.note_populated(_pairs jsonb) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO geocatalog.populated_collections (collection, readers)
    SELECT p->>0, p->>1 FROM jsonb_array_elements(coalesce(_pairs, '[]')) p
    ON CONFLICT DO NOTHING;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.forget_populated(_pairs jsonb) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    DELETE FROM geocatalog.populated_collections m
    USING jsonb_array_elements(coalesce(_pairs, '[]')) p
    WHERE m.collection = p->>0 AND m.readers = p->>1
      AND NOT EXISTS (SELECT 1 FROM geocatalog.search_items s
                      WHERE s.collection = m.collection AND m.readers = 'public'
                        AND s.readers IS NULL)
      AND NOT EXISTS (SELECT 1 FROM geocatalog.search_items s
                      WHERE s.collection = m.collection AND s.readers = m.readers);
END;
$$;

-- The index's writers: 009's index_upsert (on INSERT) and index_remove (on UPDATE and
-- DELETE) were two copies of the same upsert. They are one body now, each statement taking
-- the parts of its operation (a transition table exists only for the operations that have
-- it, and a plpgsql statement is planned only when it runs); the triggers of every
-- partition name both functions, so both are made from that body. Each collection's words
-- are made once a statement.
DO $migration$
DECLARE
    body constant text := $body$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM geocatalog.search_items s USING old_rows o
        WHERE s.id = o.id AND s.collection = o.collection;
    ELSIF TG_OP = 'UPDATE' THEN  -- the rows updated away (an id or collection changed)
        DELETE FROM geocatalog.search_items s USING old_rows o
        WHERE s.id = o.id AND s.collection = o.collection
          AND NOT EXISTS (SELECT 1 FROM new_rows n
                          WHERE n.id = o.id AND n.collection = o.collection);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO geocatalog.search_items (id, geometry, collection, datetime,
                                             end_datetime, content, words)
        SELECT n.id, n.geometry, n.collection, n.datetime, n.end_datetime,
               jsonb_build_object('properties', n.content->'properties'),
               geocatalog.own_words(n.content->'properties') || t.words
        FROM new_rows n
        JOIN (SELECT d.collection,
                     geocatalog.collection_words(d.collection, c.content->>'title') AS words
              FROM (SELECT DISTINCT collection FROM new_rows) d
              LEFT JOIN pgstac.collections c ON c.id = d.collection) t
          ON t.collection = n.collection
        ON CONFLICT (id, collection) DO UPDATE
            SET geometry = EXCLUDED.geometry, datetime = EXCLUDED.datetime,
                end_datetime = EXCLUDED.end_datetime, content = EXCLUDED.content,
                words = EXCLUDED.words;
        PERFORM geocatalog.note_populated((
            SELECT jsonb_agg(DISTINCT jsonb_build_array(collection, coalesce(
                geocatalog.item_readers(content->'properties'), 'public'))) FROM new_rows));
        PERFORM geocatalog.note_spans((SELECT jsonb_object_agg(collection, span) FROM (
            SELECT collection, max(end_datetime - datetime) AS span FROM new_rows
            GROUP BY collection) n));
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM geocatalog.forget_populated((
            SELECT jsonb_agg(DISTINCT jsonb_build_array(collection, coalesce(
                geocatalog.item_readers(content->'properties'), 'public'))) FROM old_rows));
    END IF;
    RETURN NULL;
END;
$body$;
    writer text;
BEGIN
    FOREACH writer IN ARRAY ARRAY['index_upsert', 'index_remove'] LOOP
        EXECUTE format('CREATE OR REPLACE FUNCTION geocatalog.%I() RETURNS trigger '
                       'LANGUAGE plpgsql SECURITY DEFINER '
                       'SET search_path = pg_catalog, public AS %L', writer, body);
    END LOOP;
END
$migration$;

-- 009's, copying a partition's rows only when it holds any (pgstac makes them empty).
CREATE OR REPLACE FUNCTION geocatalog.index_partition(member regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
    holds_items boolean;
BEGIN
    PERFORM geocatalog.index_triggers(member);
    IF (SELECT relkind FROM pg_class WHERE oid = member) <> 'r' THEN
        RETURN;
    END IF;
    EXECUTE format('CREATE TRIGGER geocatalog_index_truncate AFTER TRUNCATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION geocatalog.index_truncated()',
                   member);
    EXECUTE format('SELECT EXISTS (SELECT FROM %s)', member) INTO holds_items;
    IF NOT holds_items THEN
        RETURN;
    END IF;
    EXECUTE format('INSERT INTO geocatalog.search_items (id, geometry, collection, '
                   'datetime, end_datetime, content, words) SELECT i.id, i.geometry, '
                   'i.collection, i.datetime, i.end_datetime, jsonb_build_object('
                   '''properties'', i.content->''properties''), geocatalog.item_words('
                   'i.content->''properties'', i.collection, c.content->>''title'') '
                   'FROM %s i LEFT JOIN pgstac.collections c ON c.id = i.collection '
                   'ON CONFLICT DO NOTHING', member);
    EXECUTE format('INSERT INTO geocatalog.populated_collections (collection, readers) '
                   'SELECT DISTINCT collection, coalesce(geocatalog.item_readers('
                   'content->''properties''), ''public'') FROM %s '
                   'ON CONFLICT DO NOTHING', member);
    EXECUTE format('SELECT geocatalog.note_spans((SELECT jsonb_object_agg(collection, '
                   'span) FROM (SELECT collection, max(end_datetime - datetime) AS span '
                   'FROM %s GROUP BY collection) n))', member);
END;
$$;

-- A deleted collection's rows leave the index (the foreign key's ON DELETE CASCADE did).
CREATE FUNCTION geocatalog.index_collections_deleted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    DELETE FROM geocatalog.search_items s USING deleted_collections d
    WHERE s.collection = d.id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER geocatalog_index_collections_deleted
AFTER DELETE ON pgstac.collections
REFERENCING OLD TABLE AS deleted_collections FOR EACH STATEMENT
EXECUTE FUNCTION geocatalog.index_collections_deleted();

ALTER TABLE geocatalog.search_items DROP CONSTRAINT search_items_collection_fkey;
