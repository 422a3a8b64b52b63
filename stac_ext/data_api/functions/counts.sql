-- The search index's counts kept ahead of reads (`geocatalog.item_counts`, migration 020):
-- their writer, and when an aggregation may read them.

-- The key a row of the index is counted under: its collection, readers, owner (of a row that
-- is not public: an owner reads their own whatever its visibility) and year. The one place
-- the key is made (the trigger below, migration 020's first count); a SQL function in FROM,
-- so the planner inlines it. (Columns, not the row: this file is applied before the index's
-- table exists.)
CREATE OR REPLACE FUNCTION geocatalog.count_key(
    _collection text, _readers text, _owner text, _datetime timestamptz)
RETURNS TABLE (collection text, readers text, owner text, year timestamptz)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT _collection, _readers, CASE WHEN _readers IS NULL THEN NULL ELSE _owner END,
           date_trunc('year', _datetime, 'UTC')
$$;

-- A statement's rows of the index counted: one delta row per key it changed. Now and then
-- (one statement in COMPACT_EVERY) the deltas of the collections it wrote are summed into
-- one row per key: each delta is deleted by exactly one summing transaction (`DELETE ...
-- RETURNING`), which writes its sum, so counts stay exact whoever sums concurrently; a
-- collection being summed by another transaction is left to it (no writer waits).
CREATE OR REPLACE FUNCTION geocatalog.count_rows() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    compact_every constant int := 16;
    written text[];
BEGIN
    -- (a plpgsql statement is planned when it runs: each names only its operation's tables)
    IF TG_OP = 'INSERT' THEN
        INSERT INTO geocatalog.item_counts (collection, readers, owner, year, n)
        SELECT k.*, count(*)
        FROM new_rows r, geocatalog.count_key(r.collection, r.readers, r.owner, r.datetime) k
        GROUP BY 1, 2, 3, 4;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO geocatalog.item_counts (collection, readers, owner, year, n)
        SELECT k.*, -count(*)
        FROM old_rows r, geocatalog.count_key(r.collection, r.readers, r.owner, r.datetime) k
        GROUP BY 1, 2, 3, 4;
    ELSE
        INSERT INTO geocatalog.item_counts (collection, readers, owner, year, n)
        SELECT k.*, sum(d.sign)
        FROM (SELECT collection, readers, owner, datetime, 1 FROM new_rows
              UNION ALL
              SELECT collection, readers, owner, datetime, -1 FROM old_rows
             ) d(collection, readers, owner, datetime, sign),
             geocatalog.count_key(d.collection, d.readers, d.owner, d.datetime) k
        GROUP BY 1, 2, 3, 4 HAVING sum(d.sign) <> 0;
    END IF;
    IF random() * compact_every >= 1 THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT collection) INTO written FROM new_rows;
    ELSE
        SELECT array_agg(DISTINCT collection) INTO written FROM old_rows;
    END IF;
    PERFORM geocatalog.compact_counts(written);
    RETURN NULL;
END;
$$;

-- The deltas of `_collections` summed into one row per key (a key summing to 0: none), but
-- for a collection another transaction is summing now.
CREATE OR REPLACE FUNCTION geocatalog.compact_counts(_collections text[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    mine text[];
BEGIN
    SELECT array_agg(c) INTO mine FROM unnest(_collections) c
    WHERE pg_try_advisory_xact_lock(hashtextextended('geocatalog.item_counts:' || c, 0));
    IF mine IS NULL THEN
        RETURN;
    END IF;
    WITH gone AS (DELETE FROM geocatalog.item_counts WHERE collection = ANY (mine)
                  RETURNING collection, readers, owner, year, n)
    INSERT INTO geocatalog.item_counts (collection, readers, owner, year, n)
    SELECT collection, readers, owner, year, sum(n) FROM gone
    GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0;
END;
$$;

-- Whether the kept counts answer the aggregations `_names` of `_search` exactly: a search
-- of no criteria but its collections (and its reader's visibility), asking only for counts
-- by collection and year. Any other criterion or aggregation reads the rows.
CREATE OR REPLACE FUNCTION geocatalog.counts_answer(_search jsonb, _names text[])
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN _names <@ ARRAY['total_count', 'collection_frequency', 'datetime_yearly_frequency']
       AND NOT EXISTS (
           SELECT FROM jsonb_each(_search) e
           WHERE e.value <> 'null'::jsonb
             AND e.key NOT IN ('collections', 'reader', 'conf', 'limit', 'fields', 'sortby',
                               'filter-lang', 'filter_lang', 'aggregations'))
       AND jsonb_typeof(coalesce(_search->'collections', '[]')) = 'array';
END;
$$;
