"""OpenTelemetry traces, received by the SDK's in-memory exporter: one trace per request
with its SQL statements under it, and a job's run linked to the request that submitted
it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from stac_ext.platform.telemetry.traces import configured_provider
from tests.support.http import http_client
from tests.support.issuer import PROCESS_CLIENT
from tests.support.jobs import execute, wait_for
from tests.support.stac import make_item, unique


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    received = InMemorySpanExporter()
    yield received
    # the drivers stay traced for the rest of the run, into nothing
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    for instrumentor in (AsyncPGInstrumentor(), PsycopgInstrumentor(),
                         HTTPXClientInstrumentor()):
        instrumentor.uninstrument()
    received.shutdown()


@pytest.fixture(scope="module")
async def traced(service_app, exporter: InMemorySpanExporter) -> AsyncIterator:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # a worker of its own, on a queue of its own: its jobs' spans are this provider's
    async with service_app(in_process_worker=True, job_queue=unique("traced"),
                           tracer_provider=provider) as service:
        yield service.app


def _tree(spans: tuple[ReadableSpan, ...], root: ReadableSpan) -> list[ReadableSpan]:
    """`root` and every span under it."""
    under = [root]
    for span in under:
        under += [s for s in spans if s.parent and s.parent.span_id == span.context.span_id]
    return under


def _server_span(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    found = [s for s in exporter.get_finished_spans()
             if s.kind == SpanKind.SERVER and s.name == name]
    assert len(found) == 1, [s.name for s in exporter.get_finished_spans()]
    return found[0]


async def test_an_item_post_is_one_trace_with_its_sql(traced, exporter, issuer, collection):
    exporter.clear()
    async with http_client(traced, issuer.token("alice")) as c:
        r = await c.post(f"/data/collections/{collection}/items", json=make_item("traced"))
    assert r.status_code == 201, r.text
    root = _server_span(exporter, "POST /data/collections/{collection_id}/items")
    assert root.attributes is not None and root.attributes["http.status_code"] == 201
    tree = _tree(exporter.get_finished_spans(), root)
    statements = [str((s.attributes or {}).get("db.statement")) for s in tree
                  if s.kind == SpanKind.CLIENT and (s.attributes or {}).get("db.system")]
    assert any("create_item" in s or "INSERT" in s.upper() for s in statements), statements
    assert {s.context.trace_id for s in tree} == {root.context.trace_id}
    assert "Bearer" not in str([s.attributes for s in tree])  # no token in a span


async def test_a_search_is_one_trace_with_its_sql(traced, exporter, collection):
    exporter.clear()
    async with http_client(traced) as c:
        r = await c.get("/data/search", params={"collections": collection, "limit": 5})
    assert r.status_code == 200, r.text
    root = _server_span(exporter, "GET /data/search")
    statements = [str((s.attributes or {}).get("db.statement"))
                  for s in _tree(exporter.get_finished_spans(), root)
                  if (s.attributes or {}).get("db.system") == "postgresql"]
    assert any("search" in s for s in statements), statements


async def test_a_job_run_is_linked_to_the_request_that_submitted_it(traced, exporter, issuer):
    exporter.clear()
    async with http_client(traced, issuer.token("alice", client=PROCESS_CLIENT)) as c:
        r = await execute(c, "echo", {"message": "traced"})
        assert r.status_code == 201, r.text
        job = await wait_for(c, r.headers["Location"], "successful")
    assert job["status"] == "successful"
    submitted = _server_span(exporter, "POST /processes/processes/{process_id}/execution")
    # the job's record is written inside the request's trace
    written = [str((s.attributes or {}).get("db.statement"))
               for s in _tree(exporter.get_finished_spans(), submitted)]
    assert any("INSERT INTO processes.jobs" in s for s in written), written
    runs = [s for s in exporter.get_finished_spans() if s.name == "job echo"
            and (s.attributes or {}).get("geocatalog.job.id") == job["jobID"]]
    assert len(runs) == 1
    assert [link.context.trace_id for link in runs[0].links] == [submitted.context.trace_id]


def test_tracing_is_off_unless_the_variables_ask() -> None:
    assert configured_provider({}) is None
    assert configured_provider({"OTEL_TRACES_EXPORTER": "none"}) is None
    assert configured_provider({"OTEL_TRACES_EXPORTER": "otlp",
                                "OTEL_SDK_DISABLED": "true"}) is None
    provider = configured_provider({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
                                    "OTEL_SERVICE_NAME": "catalog-eu"})
    assert provider is not None
    assert provider.resource.attributes["service.name"] == "catalog-eu"
    provider.shutdown()
