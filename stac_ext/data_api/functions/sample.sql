-- The search index's sample (`geocatalog.search_sample`, migration 024): which rows it
-- holds, and its writer.

-- A row's tier: 1 for one row in 10, 2 for one in 100, 3 for one in 1,000 (each tier's rows
-- are in the tiers below it), 0 for the rest, by a hash of its key: the same row always
-- has the same tier, whoever writes it, and no property of an item decides whether it is
-- sampled. The sample holds the rows of tier 1 and up. One expression, no FROM, so the
-- planner inlines it (a call per row cost a load 2.4 us a row; inlined, the hash three
-- times, 0.2).
CREATE OR REPLACE FUNCTION geocatalog.sample_tier(_id text, _collection text)
RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ((hashtextextended(_collection || '/' || _id, 0) % 10 = 0)::int
            + (hashtextextended(_collection || '/' || _id, 0) % 100 = 0)::int
            + (hashtextextended(_collection || '/' || _id, 0) % 1000 = 0)::int)::smallint
$$;

-- A statement's rows of the index written to the sample in the same transaction: a removed
-- or replaced row's sample row goes, a written row's tier 1 and up is copied (columns by
-- name: the sample's are the index's, and its tier).
CREATE OR REPLACE FUNCTION geocatalog.sample_rows() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    -- (a plpgsql statement is planned when it runs: each names only its operation's tables)
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM geocatalog.search_sample s USING old_rows o
        WHERE geocatalog.sample_tier(o.id, o.collection) > 0
          AND s.id = o.id AND s.collection = o.collection;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO geocatalog.search_sample (id, geometry, collection, datetime,
                                              end_datetime, content, words, readers, owner,
                                              tier)
        SELECT n.id, n.geometry, n.collection, n.datetime, n.end_datetime, n.content,
               n.words, n.readers, n.owner, t.tier
        FROM new_rows n, geocatalog.sample_tier(n.id, n.collection) t(tier)
        WHERE t.tier > 0;
    END IF;
    RETURN NULL;
END;
$$;
