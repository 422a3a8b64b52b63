-- pgstac's staging table of new items, kept small.

-- pgstac's `items_staging` emptied once it has grown to `_bytes`, if no other transaction
-- is writing to it (else left as it is, for a later call): pgstac writes each statement's
-- items there and deletes them again in the same statement, so it holds no row but those of
-- transactions still open, and emptying it loses none. Its dead rows stay until autovacuum
-- comes (a database is looked at once a minute at PostgreSQL's defaults; the API's role may
-- not vacuum pgstac's table), and every statement's delete reads them all: 60 s of POSTed
-- items slowed from 488 to 345 req/s as it grew to 28 MB. True when emptied.
CREATE OR REPLACE FUNCTION geocatalog.empty_item_staging(_bytes bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF pg_relation_size('pgstac.items_staging') < _bytes THEN
        RETURN false;
    END IF;
    BEGIN  -- a block with an exception handler is a subtransaction: only when it is needed
        LOCK TABLE pgstac.items_staging IN ACCESS EXCLUSIVE MODE NOWAIT;
        TRUNCATE pgstac.items_staging;
        RETURN true;
    EXCEPTION WHEN lock_not_available THEN
        RETURN false;
    END;
END;
$$;
