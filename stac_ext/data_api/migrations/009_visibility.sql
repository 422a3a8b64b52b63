-- Who may read an item: `properties.visibility` is `public` (or absent), `private` (its
-- owner and administrators), or `project` (with `properties.project`: that group's members,
-- and its owner). Decided in the SQL that answers each read, never after it: a hidden item
-- is absent from a search, its page and its count, exactly as a missing one is.
--
-- The search index keeps who reads each item in `readers`, a column the database computes
-- from the properties it already keeps (a generated column): NULL for a public item,
-- `user:<owner>` for a private one, `project:<group>`. Anything else an operator may have
-- loaded (an unknown visibility, a `project` without its group, a private item without an
-- owner) reads as `private`, which only administrators read: fail closed. The markers of
-- non-empty collections (`populated_collections`, migration 001) are kept per readers too:
-- the collections listing shows those with an item the caller reads.

CREATE FUNCTION geocatalog.item_readers(properties jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN coalesce(properties->>'visibility', 'public') = 'public' THEN NULL
        WHEN properties->>'visibility' = 'project'
             AND jsonb_typeof(properties->'project') = 'string'
            THEN 'project:' || (properties->>'project')
        WHEN properties->>'visibility' = 'private'
             AND coalesce(properties->>'owner', '') <> ''
            THEN 'user:' || (properties->>'owner')
        ELSE 'private' END
$$;

ALTER TABLE geocatalog.search_items ADD COLUMN readers text
    GENERATED ALWAYS AS (geocatalog.item_readers(content->'properties')) STORED;
-- one collection's count for a reader stays an index-only scan (items pages count theirs)
DROP INDEX geocatalog.search_items_collection_idx;
CREATE INDEX search_items_collection_idx
    ON geocatalog.search_items (collection, datetime DESC) INCLUDE (readers);

-- The caller of a read, as the API puts it in a search (`_search->'reader'`, never the
-- client's): absent or {} anonymous; {"user": name, "groups": [...]}; {"all": true} an
-- administrator. What it reads beyond public items: those `readers` keys (NULL: all).
-- (plpgsql: its plans are kept by the session, where an SQL function that cannot be inlined
-- is planned at each call: a quarter of a single item's read)
CREATE FUNCTION geocatalog.reader_keys(reader jsonb) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF coalesce(reader->>'all', '') = 'true' THEN
        RETURN NULL;
    ELSIF coalesce(reader->>'user', '') = '' THEN
        RETURN '{}'::text[];
    END IF;
    RETURN ARRAY['user:' || (reader->>'user')] || ARRAY(
        SELECT 'project:' || g FROM jsonb_array_elements_text(
            CASE jsonb_typeof(reader->'groups') WHEN 'array' THEN reader->'groups'
                 ELSE '[]' END) g);
END;
$$;

-- The reader's condition over the search index, as SQL text: comparisons of its columns the
-- planner sees, the keys a literal (no function called per row). An item's owner reads it
-- whatever its visibility (a project item, its owner out of the project since).
CREATE FUNCTION geocatalog.readable(reader jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    keys text[] := geocatalog.reader_keys(reader);
BEGIN
    IF keys IS NULL THEN
        RETURN 'TRUE';
    ELSIF keys = '{}' THEN
        RETURN 'readers IS NULL';
    END IF;
    RETURN format('(readers IS NULL OR readers = ANY (%L::text[]) '
                  'OR content->''properties''->>''owner'' = %L)', keys, reader->>'user');
END;
$$;

-- The same rule for one item's properties (a single item read, a catalog's item links).
CREATE FUNCTION geocatalog.may_read(properties jsonb, reader jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT geocatalog.item_readers(properties) IS NULL
        OR geocatalog.reader_keys(reader) IS NULL
        OR geocatalog.item_readers(properties) = ANY (geocatalog.reader_keys(reader))
        OR (coalesce(reader->>'user', '') <> '' AND properties->>'owner' = reader->>'user')
$$;

-- search_where (007's), with the reader's condition: every search, items page, catalog
-- `_search`, count and aggregation is made here.
CREATE OR REPLACE FUNCTION geocatalog.search_where(_search jsonb) RETURNS text
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    _where text := geocatalog.datetime_bounded(geocatalog.plain_properties(
        stac_search_to_where(_search - 'q' - 'reader')));
BEGIN
    IF jsonb_typeof(_search->'q') IN ('string', 'array') THEN
        _where := format('(%s) AND words @@ %L::tsquery', _where,
                         geocatalog.words_query(_search->'q'));
    END IF;
    RETURN format('(%s) AND %s', _where, geocatalog.readable(_search->'reader'));
END;
$$;

-- One item as stored, if `_reader` may read it (else NULL, as for a missing item). The
-- item's row and who reads it in one statement; a public item (most) is answered without
-- looking at the reader, a hidden one by `may_read`'s rule.
DROP FUNCTION geocatalog.stored_item(text, text);
CREATE FUNCTION geocatalog.stored_item(_collection text, _id text, _reader jsonb)
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
CREATE FUNCTION geocatalog.read_item(_collection text, _id text, _reader jsonb)
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

-- Non-empty collections, per readers of their items (`public` for public ones).
ALTER TABLE geocatalog.populated_collections ADD COLUMN readers text NOT NULL DEFAULT 'public';
ALTER TABLE geocatalog.populated_collections DROP CONSTRAINT populated_collections_pkey;
ALTER TABLE geocatalog.populated_collections ADD PRIMARY KEY (collection, readers);
DELETE FROM geocatalog.populated_collections;
INSERT INTO geocatalog.populated_collections (collection, readers)
SELECT DISTINCT collection, coalesce(readers, 'public') FROM geocatalog.search_items;
-- a collection's hidden items, for the markers' upkeep (public items: no entry)
CREATE INDEX search_items_readers_idx ON geocatalog.search_items (collection, readers)
    WHERE readers IS NOT NULL;

-- The markers of a statement's items ([[collection, readers], ...]).
CREATE FUNCTION geocatalog.note_populated(_pairs jsonb) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    INSERT INTO geocatalog.populated_collections (collection, readers)
    SELECT p->>0, p->>1 FROM jsonb_array_elements(coalesce(_pairs, '[]')) p
    ON CONFLICT DO NOTHING
$$;

-- Markers of which no item is left in the index.
CREATE FUNCTION geocatalog.forget_populated(_pairs jsonb) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DELETE FROM geocatalog.populated_collections m
    USING jsonb_array_elements(coalesce(_pairs, '[]')) p
    WHERE m.collection = p->>0 AND m.readers = p->>1
      AND NOT EXISTS (SELECT 1 FROM geocatalog.search_items s
                      WHERE s.collection = m.collection AND m.readers = 'public'
                        AND s.readers IS NULL)
      AND NOT EXISTS (SELECT 1 FROM geocatalog.search_items s
                      WHERE s.collection = m.collection AND s.readers = m.readers)
$$;

-- The index's writers (007's), keeping the markers per readers.
CREATE OR REPLACE FUNCTION geocatalog.index_upsert() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO geocatalog.search_items (id, geometry, collection, datetime, end_datetime,
                                         content, words)
    SELECT n.id, n.geometry, n.collection, n.datetime, n.end_datetime,
           jsonb_build_object('properties', n.content->'properties'),
           geocatalog.item_words(n.content->'properties', n.collection, t.title)
    FROM new_rows n
    LEFT JOIN (SELECT c.id, c.content->>'title' AS title FROM pgstac.collections c
               WHERE c.id IN (SELECT DISTINCT collection FROM new_rows)) t
           ON t.id = n.collection
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
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.index_remove() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM geocatalog.search_items s USING old_rows o
        WHERE s.id = o.id AND s.collection = o.collection
          AND NOT EXISTS (SELECT 1 FROM new_rows n
                          WHERE n.id = o.id AND n.collection = o.collection);
        INSERT INTO geocatalog.search_items (id, geometry, collection, datetime,
                                             end_datetime, content, words)
        SELECT n.id, n.geometry, n.collection, n.datetime, n.end_datetime,
               jsonb_build_object('properties', n.content->'properties'),
               geocatalog.item_words(n.content->'properties', n.collection, t.title)
        FROM new_rows n
        LEFT JOIN (SELECT c.id, c.content->>'title' AS title FROM pgstac.collections c
                   WHERE c.id IN (SELECT DISTINCT collection FROM new_rows)) t
               ON t.id = n.collection
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
    ELSE
        DELETE FROM geocatalog.search_items s USING old_rows o
        WHERE s.id = o.id AND s.collection = o.collection;
    END IF;
    PERFORM geocatalog.forget_populated((
        SELECT jsonb_agg(DISTINCT jsonb_build_array(collection, coalesce(
            geocatalog.item_readers(content->'properties'), 'public'))) FROM old_rows));
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.index_truncated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    emptied text := (SELECT pgstac.partition_collection(a.relid)
                     FROM pg_partition_ancestors(TG_RELID) a
                     WHERE pgstac.partition_collection(a.relid) IS NOT NULL LIMIT 1);
BEGIN
    EXECUTE format('DELETE FROM geocatalog.search_items s WHERE s.collection = %L '
                   'AND NOT EXISTS (SELECT 1 FROM pgstac.items i WHERE i.collection = %L '
                   'AND i.id = s.id)', emptied, emptied);
    PERFORM geocatalog.forget_populated((
        SELECT jsonb_agg(jsonb_build_array(collection, readers))
        FROM geocatalog.populated_collections WHERE collection = emptied));
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.index_partition(member regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    PERFORM geocatalog.index_triggers(member);
    IF (SELECT relkind FROM pg_class WHERE oid = member) = 'r' THEN
        EXECUTE format('CREATE TRIGGER geocatalog_index_truncate AFTER TRUNCATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION geocatalog.index_truncated()',
                       member);
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
    END IF;
END;
$$;

-- The collections listing (001's collection_page): those with an item the reader reads.
CREATE OR REPLACE FUNCTION geocatalog.collection_page(_search jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path TO pgstac, public
AS $$
DECLARE
    keys text[] := geocatalog.reader_keys(_search->'reader');
    _where text := format(
        '(%s) AND EXISTS (SELECT 1 FROM geocatalog.populated_collections p '
        'WHERE p.collection = c.id%s)', stac_search_to_where(_search - 'reader'),
        CASE WHEN keys IS NULL THEN ''
             ELSE format(' AND p.readers = ANY (%L::text[])', ARRAY['public'] || keys) END);
    _limit int := search_limit(_search);
    _offset int := search_offset(_search);
    _orderby text := sort_sqlorderby(_search, FALSE, '{id}');
    _fields jsonb := coalesce(_search->'fields', '{}'::jsonb);
    _href text := concat(rtrim(base_url(_search->'conf'), '/'), '/collections');
    _from text := 'collections_asitems c';
    matched bigint;
    page jsonb;
    links jsonb := '[]'::jsonb;
BEGIN
    EXECUTE format('SELECT count(*) FROM %s WHERE %s', _from, _where) INTO matched;
    EXECUTE format(
        'SELECT coalesce(jsonb_agg(r.doc ORDER BY r.n), ''[]''::jsonb) FROM ('
        '  SELECT jsonb_fields(collectionjson, %L) AS doc, row_number() OVER (ORDER BY %s) AS n'
        '  FROM %s WHERE %s ORDER BY %s LIMIT %L OFFSET %L) r',
        _fields, _orderby, _from, _where, _orderby, _limit, _offset
    ) INTO page;

    IF _offset > 0 THEN
        links := links || jsonb_build_object(
            'rel', 'prev', 'type', 'application/json', 'method', 'GET', 'href', _href,
            'body', jsonb_build_object(
                'offset', greatest(least(_offset, matched) - greatest(_limit, 1), 0)),
            'merge', true);
    END IF;
    IF _limit > 0 AND _offset + _limit < matched THEN
        links := links || jsonb_build_object(
            'rel', 'next', 'type', 'application/json', 'method', 'GET', 'href', _href,
            'body', jsonb_build_object('offset', _offset + _limit),
            'merge', true);
    END IF;

    RETURN jsonb_build_object(
        'collections', page,
        'numberMatched', matched,
        'numberReturned', jsonb_array_length(page),
        'links', links
    );
END;
$$;

-- The new column's statistics (its null fraction: most items are public), before any
-- search plans with it: unknown, `readers IS NULL` would read as rare and an items page
-- scan its whole collection instead of the first of its index.
ANALYZE geocatalog.search_items;
