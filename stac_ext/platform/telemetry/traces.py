"""OpenTelemetry traces: one trace per request, with its SQL statements (asyncpg, psycopg)
and its outgoing HTTP (httpx); a job's run is a span linked to the request that submitted
it (the job engine records the request's trace context with the job).

Off by default, so that an untraced service pays nothing: on when the standard variables
name an exporter (`OTEL_TRACES_EXPORTER=otlp|console`, or an `OTEL_EXPORTER_OTLP_ENDPOINT`
/ `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), and never with `OTEL_SDK_DISABLED=true`. The
exporter reads the rest of its configuration (headers, protocol, timeouts) from the same
variables; the service is named by `OTEL_SERVICE_NAME` (default `geocatalog`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SpanExporter,
)

#: FastAPI's own telemetry, off in each of our apps: requests are traced by the
#: instrumentation below (`instrument_app`), and while it is on FastAPI asks OpenTelemetry
#: for its global providers on every request (6 us each) to find it has nothing to do.
NATIVE_TELEMETRY_OFF: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}


def _exporter(environ: Mapping[str, str]) -> SpanExporter | None:
    """The exporter the variables name, or None: tracing stays off."""
    if environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return None
    named = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    endpoint = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT")
    if named == "console":
        return ConsoleSpanExporter()
    if named == "otlp" or (not named and endpoint):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    return None


def configured_provider(environ: Mapping[str, str] = os.environ) -> TracerProvider | None:
    """A tracer provider exporting where the variables say, or None (tracing off)."""
    exporter = _exporter(environ)
    if exporter is None:
        return None
    provider = TracerProvider(resource=Resource.create(
        {SERVICE_NAME: environ.get("OTEL_SERVICE_NAME") or "geocatalog"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def instrument_libraries(provider: TracerProvider) -> None:
    """The database drivers and httpx traced through `provider` (process-wide:
    instrumenting twice is a no-op). The provider is handed to what traces, never made
    global: a global provider would turn on FastAPI's own telemetry in every app beside
    the instrumentation's (a second span per request)."""
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    for instrumentor in (AsyncPGInstrumentor(), PsycopgInstrumentor(),
                         HTTPXClientInstrumentor()):
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument(tracer_provider=provider)


def instrument_app(app: FastAPI, provider: TracerProvider, *mounted: FastAPI) -> None:
    """Every request of `app` a trace of its own; a request to a `mounted` app (the
    process API) a span of that app under it, named by the mounted app's own routes (the
    root span is named by the whole template: `RequestMetricsMiddleware`)."""
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    instrument_libraries(provider)
    for each in (app, *mounted):
        FastAPIInstrumentor.instrument_app(each, tracer_provider=provider,
                                           excluded_urls="/metrics,/healthz")
