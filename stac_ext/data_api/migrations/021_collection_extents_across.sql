-- Collections as the collections listing searches them: pgstac's view, with the geometry of
-- an extent across the antimeridian (its west edge east of its east edge, as STAC writes
-- it) as the two boxes it is. pgstac stores one envelope of the four numbers, the band
-- between instead of the band across 180°, so a search there missed the collection and a
-- search of the band between found it (`geocatalog.extent_geometry`).
CREATE VIEW geocatalog.collections_asitems AS
SELECT v.id, geocatalog.extent_geometry(v.collectionjson, v.geometry) AS geometry,
       v.collection, v.datetime, v.end_datetime, v.content, v.collectionjson
FROM pgstac.collections_asitems v;
