-- `numberMatched` is exact below `context_estimated_count` (100,000) matches and estimated
-- above it, as 002 meant, whatever the count's planned cost: pgstac also counts exactly
-- whatever the planner calls cheap (below `context_estimated_cost`), and an index-only
-- count of a large collection is (a collection of 1.6 million items: planned at 93,000,
-- below pgstac's 100,000; counted in 0.4-0.6 s on each of its items pages).
INSERT INTO pgstac.pgstac_settings (name, value) VALUES ('context_estimated_cost', '0')
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;
