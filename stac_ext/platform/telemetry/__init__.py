"""What an operator watches: Prometheus metrics (`/metrics`, or a port of their own) and
OpenTelemetry traces (off unless `OTEL_*` variables ask for them).

Imports nothing else of ours: the composition root hands it what it reads (the pools, the
items kept as served, the job engine's readings) as plain callables.

Third-party imports: `fastapi`, `opentelemetry`, `prometheus_client`, `pydantic`,
`pydantic_settings`, `starlette`.
"""
