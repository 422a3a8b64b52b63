"""Telemetry's settings: the log format and where metrics are served. (Traces follow
OpenTelemetry's own `OTEL_*` variables.)"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class TelemetrySettings(BaseSettings):
    """Logs and metrics"""

    model_config = SettingsConfigDict(extra="ignore", use_attribute_docstrings=True)

    log_format: Literal["text", "json"] = "text"
    """`json`: one JSON object per line (`time`, `level`, `logger`, `message`,
    `request_id`, `exception`) for `serve` and `worker`."""
    metrics: bool = True
    """Prometheus metrics at `/metrics` (beside `/data` and `/processes`, not under them),
    or on `METRICS_PORT`; `false`: no request is counted and no metrics are served."""
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    """`serve` exposes the metrics on this port of `METRICS_HOST` instead of `/metrics` (a
    port a firewall keeps to the scraper)."""
    worker_metrics_port: int | None = Field(default=None, ge=1, le=65535)
    """`geocatalog worker` exposes its metrics (jobs run, their durations, the queue, its
    pools) on this port of `METRICS_HOST`; unset: none."""
    metrics_host: str = "127.0.0.1"
    """The address the metrics ports listen on."""
    metrics_sample_seconds: float = Field(default=5.0, gt=0)
    """How often each process reads its pools, its items kept as served and the job queue
    into the metrics' gauges (a scrape reads its own process's at once)."""
