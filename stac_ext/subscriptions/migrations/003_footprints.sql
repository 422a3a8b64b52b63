-- A saved search's bbox with heights (six numbers) as its footprint, as the API now saves
-- it: its criteria made a solid (a PolyhedralSurface) that the matcher could not
-- intersect, and its error stopped the matching of every subscription's events.
UPDATE subscriptions.subscriptions s
SET search = f.search,
    geometry = (SELECT c.geometry FROM subscriptions.criteria(f.search) c)
FROM (SELECT id, jsonb_set(search, '{bbox}', jsonb_build_array(
                 search->'bbox'->0, search->'bbox'->1, search->'bbox'->3,
                 search->'bbox'->4)) AS search
      FROM subscriptions.subscriptions
      WHERE jsonb_typeof(search->'bbox') = 'array'
        AND jsonb_array_length(search->'bbox') = 6) f
WHERE s.id = f.id;
