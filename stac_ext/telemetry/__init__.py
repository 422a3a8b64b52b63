"""What an operator watches: Prometheus metrics (`/metrics`, or a port of their own) and
OpenTelemetry traces (off unless `OTEL_*` variables ask for them).

May import prometheus-client, OpenTelemetry, Starlette/FastAPI and the standard library;
nothing else of stac_ext: the composition root hands it what it reads (the pools, the items
kept as served, the job engine's readings) as plain callables.
"""
