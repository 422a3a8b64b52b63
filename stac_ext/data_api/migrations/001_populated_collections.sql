-- GET /collections lists only collections with at least one item.
-- A marker row per non-empty collection, kept by triggers on pgstac.items' partitions however
-- items arrive (API, pypgstac COPY straight into a partition), so the listing is one indexed
-- join instead of a probe of every collection's partitions.

CREATE TABLE geocatalog.populated_collections (
    collection text PRIMARY KEY REFERENCES pgstac.collections (id) ON DELETE CASCADE
);
-- pgstac's roles read it (collection search) and cascade into it (collection delete).
GRANT USAGE ON SCHEMA geocatalog TO pgstac_read, pgstac_ingest, pgstac_admin;
GRANT SELECT ON geocatalog.populated_collections TO pgstac_read, pgstac_ingest, pgstac_admin;
GRANT DELETE ON geocatalog.populated_collections TO pgstac_ingest, pgstac_admin;
