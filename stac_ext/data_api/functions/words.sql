-- Free text: the words of an item, of its collection, and of a query.

-- The search's `q` as a text search query (a string, or the extension's list of terms).
CREATE OR REPLACE FUNCTION geocatalog.words_query(q jsonb) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT websearch_to_tsquery('english'::regconfig, CASE jsonb_typeof(q)
        WHEN 'array' THEN (SELECT string_agg(t, ' OR ') FROM jsonb_array_elements_text(q) t)
        ELSE q #>> '{}' END)
$$;

CREATE OR REPLACE FUNCTION geocatalog.own_words(properties jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('english'::regconfig, coalesce(properties->>'title', ''))
        || to_tsvector('english'::regconfig, coalesce(properties->>'keywords', ''))
        || to_tsvector('english'::regconfig, coalesce(properties->>'description', ''))
$$;

-- The words of a collection, added to each of its items': its id's (cf-sea_water_salinity:
-- the variable's standard name) and its title's.
CREATE OR REPLACE FUNCTION geocatalog.collection_words(collection text, collection_title text)
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
