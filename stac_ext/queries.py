"""Named SQL of the data API (everything else goes through pgstac's functions)."""

COLLECTION_EXISTS = "SELECT EXISTS (SELECT 1 FROM pgstac.collections WHERE id = $1)"
