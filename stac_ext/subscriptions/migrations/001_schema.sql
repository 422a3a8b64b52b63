-- The subscriptions' schema, alone: its functions (functions/) are made once it exists,
-- before the migrations that use them.
CREATE SCHEMA subscriptions;
