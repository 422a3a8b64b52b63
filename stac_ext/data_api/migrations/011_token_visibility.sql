-- A paging token names an item: one the caller may not read is answered as a missing one
-- (the same error), so a token cannot tell that a hidden item exists, nor position a page
-- at its sort keys. search_where (009's) checks it: every search and items page is made
-- there, before the token's item is looked at.
CREATE FUNCTION geocatalog.check_token(_token text, _reader jsonb) RETURNS void
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
BEGIN
    IF NOT geocatalog.may_read((geocatalog.token_item(_token)).item.content->'properties',
                               _reader) THEN
        RAISE EXCEPTION 'Could not find item using token: %', _token;
    END IF;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.search_where(_search jsonb) RETURNS text
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    _where text := geocatalog.datetime_bounded(geocatalog.plain_properties(
        stac_search_to_where(_search - 'q' - 'reader')));
BEGIN
    IF _search->>'token' IS NOT NULL THEN
        PERFORM geocatalog.check_token(_search->>'token', _search->'reader');
    END IF;
    IF jsonb_typeof(_search->'q') IN ('string', 'array') THEN
        _where := format('(%s) AND words @@ %L::tsquery', _where,
                         geocatalog.words_query(_search->'q'));
    END IF;
    RETURN format('(%s) AND %s', _where, geocatalog.readable(_search->'reader'));
END;
$$;
