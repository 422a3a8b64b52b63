-- What keeps the schema bounded and the data API's outbox written while it is needed.

-- The data API writes its outbox (geocatalog.item_events) while a subscription exists. The
-- lock orders two transactions changing the subscriptions at once: the second reads the
-- first's outcome (each statement of this function sees what is committed when it runs).
CREATE OR REPLACE FUNCTION subscriptions.listening() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('subscriptions.listening'));
    IF EXISTS (SELECT FROM subscriptions.subscriptions) THEN
        INSERT INTO geocatalog.item_event_listeners (name) VALUES ('subscriptions')
        ON CONFLICT DO NOTHING;
    ELSE
        DELETE FROM geocatalog.item_event_listeners WHERE name = 'subscriptions';
    END IF;
    RETURN NULL;
END;
$$;

-- A deleted subscription's events go with it.
CREATE OR REPLACE FUNCTION subscriptions.events_gone() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM subscriptions.events e USING gone g WHERE e.subscription_id = g.id;
    RETURN NULL;
END;
$$;

-- Events kept `_keep` at most, and each subscription's newest `_backlog`: those dropped
-- before its webhook was sent them are counted (`dropped`, on its page) and its webhook goes
-- on after them. Each subscription's last `_attempts` delivery attempts are kept. How many
-- events went.
CREATE OR REPLACE FUNCTION subscriptions.prune(_keep interval, _backlog bigint, _attempts int)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    gone bigint := 0;
    n bigint;
BEGIN
    WITH dropped AS (
        DELETE FROM subscriptions.events e WHERE e.matched < now() - _keep
        RETURNING e.subscription_id, e.number)
    SELECT subscriptions.count_dropped(jsonb_agg(jsonb_build_array(subscription_id, number)))
    INTO n FROM dropped;
    gone := gone + coalesce(n, 0);
    WITH dropped AS (
        DELETE FROM subscriptions.events e USING subscriptions.progress g
        WHERE e.subscription_id = g.subscription_id AND g.last_number > _backlog
          AND e.number <= g.last_number - _backlog
        RETURNING e.subscription_id, e.number)
    SELECT subscriptions.count_dropped(jsonb_agg(jsonb_build_array(subscription_id, number)))
    INTO n FROM dropped;
    gone := gone + coalesce(n, 0);
    DELETE FROM subscriptions.deliveries d
    USING (SELECT s.id, (SELECT x.attempt FROM subscriptions.deliveries x
                         WHERE x.subscription_id = s.id
                         ORDER BY x.attempt DESC OFFSET _attempts LIMIT 1) AS cut
           FROM subscriptions.subscriptions s WHERE s.webhook IS NOT NULL) c
    WHERE d.subscription_id = c.id AND d.attempt <= c.cut;
    RETURN gone;
END;
$$;

-- Of events dropped ([subscription, number] pairs), those its webhook was not sent yet:
-- counted, and its webhook's place moved past them. How many events were dropped.
CREATE OR REPLACE FUNCTION subscriptions.count_dropped(_dropped jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    IF _dropped IS NULL THEN
        RETURN 0;
    END IF;
    UPDATE subscriptions.progress g
    SET dropped = g.dropped + d.unsent, delivered_number = greatest(g.delivered_number, d.last)
    FROM (SELECT x.subscription_id AS id,
                 count(*) FILTER (WHERE (p->>1)::bigint > x.delivered_number) AS unsent,
                 max((p->>1)::bigint) AS last
          FROM jsonb_array_elements(_dropped) p
          JOIN subscriptions.progress x ON x.subscription_id = (p->>0)::uuid
          JOIN subscriptions.subscriptions s ON s.id = x.subscription_id
          WHERE s.webhook IS NOT NULL GROUP BY x.subscription_id) d
    WHERE g.subscription_id = d.id AND d.unsent > 0;
    RETURN jsonb_array_length(_dropped);
END;
$$;
