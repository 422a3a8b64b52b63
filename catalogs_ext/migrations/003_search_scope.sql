-- Item search inside a subtree is the data API's own search (of any number of collections)
-- with the subtree's filter: this gives the search body, the caller runs the search. NULL
-- when the catalog does not exist; a subtree that links nothing matches nothing.
-- Items are known by the data API's search index (geocatalog.search_items, same keys as
-- pgstac.items, one table however many partitions pgstac has).

GRANT EXECUTE ON FUNCTION catalogs.scope(jsonb, text) TO pgstac_read, pgstac_ingest, pgstac_admin;
DROP FUNCTION IF EXISTS catalogs.search(jsonb, text);
