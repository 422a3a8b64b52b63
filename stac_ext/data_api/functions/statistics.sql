-- The planner's statistics of the search index (and its sample), kept fresh by the writes that grow it. A
-- statement that leaves the index half as large again as at its last ANALYZE (or past a
-- few pages, never analyzed) analyzes it, in its own transaction, unless another session
-- is analyzing or vacuuming it. Autovacuum does the same within a minute or so; until then
-- the planner plans with the statistics of before, and items pages read their whole
-- collection after a bulk load into a migrated database (`pypgstac load` writes through
-- the index's triggers; docs/performance.md). A load that doubles the index analyzes it about twice, a fraction of a
-- second each (a sample of a fixed size); an API write costs a look at the table's size.
CREATE OR REPLACE FUNCTION geocatalog.fresh_statistics() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    pages bigint := pg_relation_size('geocatalog.search_items')
                    / current_setting('block_size')::bigint;
    known record;
BEGIN
    SELECT relpages, reltuples INTO known FROM pg_class
    WHERE oid = 'geocatalog.search_items'::regclass;
    IF pages < 16 OR (known.reltuples >= 0 AND pages <= known.relpages * 1.5) THEN
        RETURN;
    END IF;
    BEGIN
        LOCK TABLE geocatalog.search_items IN SHARE UPDATE EXCLUSIVE MODE NOWAIT;
        ANALYZE geocatalog.search_items;
        ANALYZE geocatalog.search_sample;  -- grown with it (a tenth of its rows)
    EXCEPTION WHEN lock_not_available THEN
        NULL;  -- analyzed or vacuumed by another session now
    END;
END;
$$;
