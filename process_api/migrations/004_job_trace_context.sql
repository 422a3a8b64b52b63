-- The trace context of the request that submitted a job (W3C `traceparent`, as a
-- propagator's carrier), so that the job's run is linked to it in the traces; NULL when
-- the service traces nothing.
ALTER TABLE processes.jobs ADD COLUMN trace_context jsonb;
