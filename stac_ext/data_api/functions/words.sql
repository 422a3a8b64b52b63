-- Free text: the words of an item, of its collection, and of a query.

-- A text with the `-`, `_` and `.` inside its words made spaces: a file name or an id
-- (`sst-2022-01.nc`, which the parser reads as one host name) as the words it is made of.
CREATE OR REPLACE FUNCTION geocatalog.split_words(words text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(words, '([[:alnum:]])[-_.]+(?=[[:alnum:]])', '\1 ', 'g')
$$;

-- The search's `q` as a text search query (a string, or the extension's list of terms), its
-- words split as the items' are (`sst-2022` is sst and 2022; a leading `-` still excludes).
CREATE OR REPLACE FUNCTION geocatalog.words_query(q jsonb) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT websearch_to_tsquery('english'::regconfig, geocatalog.split_words(
        CASE jsonb_typeof(q)
        WHEN 'array' THEN (SELECT string_agg(t, ' OR ') FROM jsonb_array_elements_text(q) t)
        ELSE q #>> '{}' END))
$$;

-- An item's own words: its title, keywords and description as written (phrases, `v1.2`),
-- then each again with its file names and ids split (`sst-2022-01.nc`: sst, 2022, 01, nc).
CREATE OR REPLACE FUNCTION geocatalog.own_words(properties jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('english'::regconfig, coalesce(properties->>'title', ''))
        || to_tsvector('english'::regconfig, coalesce(properties->>'keywords', ''))
        || to_tsvector('english'::regconfig, coalesce(properties->>'description', ''))
        || to_tsvector('english'::regconfig,
                       geocatalog.split_words(coalesce(properties->>'title', '')))
        || to_tsvector('english'::regconfig,
                       geocatalog.split_words(coalesce(properties->>'keywords', '')))
        || to_tsvector('english'::regconfig,
                       geocatalog.split_words(coalesce(properties->>'description', '')))
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
