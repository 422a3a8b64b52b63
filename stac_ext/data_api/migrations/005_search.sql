-- Item search over the search index (004): pgstac's search(), answer for answer (same SQL
-- translation of the request, same order, same paging tokens and links, same
-- numberMatched rules), with the page's keys found in the index and its items read from
-- their partitions by key. pgstac.items is read by a collection literal, or a partition by
-- name (dynamic SQL): a statement plans and locks those partitions only, never all of them
-- (a parameterised one plans every partition once its plan is generic).

-- numberMatched, as pgstac's where_stats decides it (context off: none; auto: the
-- planner's estimate when both it and its cost pass pgstac's thresholds, else a count),
-- over the index, and reused for pgstac's context_stats_ttl.
CREATE TABLE geocatalog.search_counts (
    where_hash text PRIMARY KEY,  -- md5 of the search's WHERE clause
    matched bigint NOT NULL,
    counted_at timestamptz NOT NULL DEFAULT now()
);
