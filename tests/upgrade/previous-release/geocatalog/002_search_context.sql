-- Searches report `numberMatched` (pystac-client's `matched()`, OGC API Features):
-- exact below pgstac's `context_estimated_count`, estimated above it, so big result sets
-- do not pay for a full count.
INSERT INTO pgstac.pgstac_settings (name, value) VALUES ('context', 'auto')
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;
