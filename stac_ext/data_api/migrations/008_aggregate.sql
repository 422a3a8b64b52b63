-- Aggregations (the STAC API aggregation extension) of a search's matches, over the search
-- index with the search's own WHERE (search_where): facets follow every parameter of the
-- search, and are exact counts.

-- (its functions live in functions/, one source per concern)
