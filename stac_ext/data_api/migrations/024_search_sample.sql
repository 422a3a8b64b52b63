-- A sample of the search index kept ahead of reads (`search_sample`): its rows of tier 1
-- and up (`geocatalog.sample_tier`: one row in 10, of which one in 10 is tier 2, ...), with
-- every column of the index, so that a search's own conditions (`search_where`, the
-- reader's visibility included) apply to it unchanged. An aggregation of many matches
-- counts the sample's and scales them (`geocatalog.aggregate`): its cost follows its
-- budget, not the items (a region's two years at ten million items read 21,000 rows, 3.7 s
-- from the disk).
--
-- Kept by statement triggers on the index, in the transaction that writes it, as its
-- counts are (migration 020): the sample never disagrees with the index.
CREATE TABLE geocatalog.search_sample (
    LIKE geocatalog.search_items,  -- `readers` and `owner` copied, not generated again
    tier smallint NOT NULL,
    PRIMARY KEY (id, collection)
);
-- the index's keys an aggregation reads (place and time, place, a collection, words,
-- owner), and the same but the owner's for the tiers above 1, so that a coarser tier reads
-- its own rows
CREATE INDEX search_sample_time_place_idx ON geocatalog.search_sample
    USING GIST (datetime, geometry);
CREATE INDEX search_sample_geometry_idx ON geocatalog.search_sample USING GIST (geometry);
CREATE INDEX search_sample_collection_idx
    ON geocatalog.search_sample (collection, datetime DESC) INCLUDE (readers);
CREATE INDEX search_sample_owner_idx ON geocatalog.search_sample (owner, datetime DESC)
    INCLUDE (readers) WHERE owner IS NOT NULL;
CREATE INDEX search_sample_words_idx ON geocatalog.search_sample USING GIN (words);
CREATE INDEX search_sample_time_place_2_idx ON geocatalog.search_sample
    USING GIST (datetime, geometry) WHERE tier >= 2;
CREATE INDEX search_sample_collection_2_idx
    ON geocatalog.search_sample (collection, datetime DESC) INCLUDE (readers) WHERE tier >= 2;
CREATE INDEX search_sample_words_2_idx ON geocatalog.search_sample USING GIN (words)
    WHERE tier >= 2;
CREATE INDEX search_sample_geometry_2_idx ON geocatalog.search_sample USING GIST (geometry)
    WHERE tier >= 2;
CREATE INDEX search_sample_time_place_3_idx ON geocatalog.search_sample
    USING GIST (datetime, geometry) WHERE tier >= 3;
CREATE INDEX search_sample_collection_3_idx
    ON geocatalog.search_sample (collection, datetime DESC) INCLUDE (readers) WHERE tier >= 3;
CREATE INDEX search_sample_words_3_idx ON geocatalog.search_sample USING GIN (words)
    WHERE tier >= 3;
CREATE INDEX search_sample_geometry_3_idx ON geocatalog.search_sample USING GIST (geometry)
    WHERE tier >= 3;

INSERT INTO geocatalog.search_sample (id, geometry, collection, datetime, end_datetime,
                                      content, words, readers, owner, tier)
SELECT r.id, r.geometry, r.collection, r.datetime, r.end_datetime, r.content, r.words,
       r.readers, r.owner, t.tier
FROM geocatalog.search_items r, geocatalog.sample_tier(r.id, r.collection) t(tier)
WHERE t.tier > 0;

CREATE TRIGGER geocatalog_sample_insert AFTER INSERT ON geocatalog.search_items
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
EXECUTE FUNCTION geocatalog.sample_rows();
CREATE TRIGGER geocatalog_sample_update AFTER UPDATE ON geocatalog.search_items
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
EXECUTE FUNCTION geocatalog.sample_rows();
CREATE TRIGGER geocatalog_sample_delete AFTER DELETE ON geocatalog.search_items
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
EXECUTE FUNCTION geocatalog.sample_rows();
