-- Items are written without pgstac's staging table (functions/items.sql, `create_items`):
-- the function that kept that table small, and its file's record, go.
DROP FUNCTION IF EXISTS geocatalog.empty_item_staging(bigint);
DELETE FROM geocatalog.schema_functions
WHERE schema_name = 'geocatalog' AND file = 'staging.sql';
