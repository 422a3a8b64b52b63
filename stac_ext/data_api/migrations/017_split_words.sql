-- Words split on `-`, `_` and `.` (functions/words.sql): every indexed item's words read
-- again, so that `sst`, `nc` and `sst-2022` find "Sea surface temperature - sst-2022-01.nc"
-- (the parser read the file name as one host name).

UPDATE geocatalog.search_items s
SET words = geocatalog.item_words(s.content->'properties', s.collection, c.content->>'title')
FROM pgstac.collections c WHERE c.id = s.collection;
