-- Stock stac-fastapi-pgstac adds `type = Collection` to every collection search (pgstac keeps
-- catalogs in the collections table too), as a CQL2 clause or, with `query`, a query term.
-- Every collection with items is a collection, and the clause made pgstac build every
-- collection's document to test it (80 ms a page at 5,000 collections): it is taken out
-- before the search (migration 001's function, renamed collection_page, answers it).

-- (its functions live in functions/, one source per concern)
