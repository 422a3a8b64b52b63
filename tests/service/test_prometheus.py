"""A real Prometheus (Debian's) scrapes a live `geocatalog serve --workers 2` and a
`geocatalog worker`, with the shipped alert rules loaded: after real traffic and a real
job, its query API holds the series, added up over the API's processes. Its graph of the
traffic is the screenshot of docs/operators/metrics.md."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import httpx
import psycopg
import pytest
import yaml

from stac_ext.settings import Settings
from tests.support.browser import CHROMIUM, chromium
from tests.support.cli import COMMAND, start_cli
from tests.support.cluster import migrated_database
from tests.support.http import free_port, wait_until_ok
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT, TestIssuer
from tests.support.paths import ROOT
from tests.support.roles import role_env
from tests.support.stac import make_collection, make_item, unique
from tests.support.uvicorn_process import server_process

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
ALERTS = ROOT / "docker" / "prometheus" / "alerts.yml"
#: The docs' graph: retaken into docs/img by `make screenshots`, else beside the run's
SHOT = ROOT / ("docs/img" if os.environ.get("UPDATE_SCREENSHOTS") else ".artifacts/docs-img") \
    / "prometheus-requests.jpg"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path(PROMETHEUS).exists(),
                                 reason="Debian's prometheus (make test installs it)")]


def _env(settings: Settings, url: str, **more: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": url, **role_env(url),
            "OIDC_ISSUER": settings.oidc_issuer or "", "LOAD_DEMO_DATA": "false",
            "MIGRATE_ON_START": "false", "GEOCATALOG_DATA_DIR": str(settings.data_dir),
            "METRICS_SAMPLE_SECONDS": "0.5", "JOB_HEARTBEAT_SECONDS": "0.5", **more}


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    """The stack's own database: no other test's job is in its queue (its worker would
    reap one left by a dead worker, and count its end)."""
    return migrated_database(database_url, "prom_")


@pytest.fixture(scope="module")
def stack(settings: Settings, database: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[dict[str, str]]:
    """The API (two processes), a worker on a queue of its own, and Prometheus, on a
    database of their own."""
    queue = f"prom-{uuid.uuid4().hex[:8]}"
    api, worker, prom = free_port(), free_port(), free_port()
    folder = tmp_path_factory.mktemp("prometheus")
    config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
              "rule_files": [str(ALERTS)],
              "scrape_configs": [
                  {"job_name": "geocatalog",
                   "static_configs": [{"targets": [f"127.0.0.1:{api}"]}]},
                  {"job_name": "geocatalog-worker",
                   "static_configs": [{"targets": [f"127.0.0.1:{worker}"]}]}]}
    (folder / "prometheus.yml").write_text(yaml.safe_dump(config))
    worker_process = start_cli("worker", env=_env(settings, database, JOB_QUEUE=queue,
                                                  WORKER_METRICS_PORT=str(worker)))
    try:
        assert wait_until_ok(f"http://127.0.0.1:{worker}/metrics").status_code == 200
        with server_process(
                [*COMMAND, "serve", "--workers", "2", "--port", str(api)],
                api, _env(settings, database, JOB_QUEUE=queue, IN_PROCESS_WORKER="false",
                          DB_MAX_CONN_SIZE="3"), "/healthz", timeout=120), \
             server_process(
                [PROMETHEUS, f"--config.file={folder / 'prometheus.yml'}",
                 f"--storage.tsdb.path={folder / 'data'}",
                 f"--web.listen-address=127.0.0.1:{prom}"], prom, dict(os.environ),
                "/-/ready", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
            yield {"api": f"http://127.0.0.1:{api}", "prometheus": f"http://127.0.0.1:{prom}",
                   "worker_metrics": f"http://127.0.0.1:{worker}/metrics"}
    finally:
        worker_process.terminate()
        worker_process.wait(20)


def query(stack: dict[str, str], promql: str) -> list[dict]:
    r = httpx.get(f"{stack['prometheus']}/api/v1/query", params={"query": promql})
    assert r.status_code == 200, r.text
    return r.json()["data"]["result"]


def eventually(stack: dict[str, str], promql: str, holds: Callable[[float], bool],
               seconds: float = 60) -> float:
    """The query's single value once `holds` says yes (bounded wait for the next scrapes;
    not a timing assertion): the last value seen."""
    deadline = time.monotonic() + seconds
    while True:
        result = query(stack, promql)
        seen = float(result[0]["value"][1]) if len(result) == 1 else float("nan")
        if holds(seen) or time.monotonic() > deadline:
            return seen
        time.sleep(0.5)


def test_prometheus_scrapes_the_api_and_a_worker(stack, database: str,
                                                 issuer: TestIssuer) -> None:
    api = stack["api"]
    admin = {"Authorization": f"Bearer {issuer.token('root', rights=[ADMIN_RIGHT])}"}
    collection = unique("test_conv-prom_")
    r = httpx.post(f"{api}/data/collections", json=make_collection(collection), headers=admin)
    assert r.status_code == 201, r.text
    for n in range(5):
        r = httpx.post(f"{api}/data/collections/{collection}/items",
                       json=make_item(f"p-{n}"), headers=admin)
        assert r.status_code == 201, r.text
    # 40 reads of one item, spread by the kernel over both API processes
    with httpx.Client(base_url=api) as client:
        for n in range(40):
            assert client.get(f"/data/collections/{collection}/items/p-{n % 5}"
                              ).status_code == 200
    alice = {"Authorization": f"Bearer {issuer.token('alice', client=PROCESS_CLIENT)}"}
    r = httpx.post(f"{api}/processes/processes/echo/execution", headers=alice,
                   json={"processInputs": {"message": "scraped"}})
    assert r.status_code == 201, r.text
    job_url = r.headers["Location"]

    item_route = 'route="/data/collections/{collection_id}/items/{item_id}"'
    assert eventually(stack, f'sum(geocatalog_http_requests_total{{{item_route},'
                      f'method="GET",status="2xx"}})', lambda v: v >= 40) == 40
    assert eventually(stack, 'sum(geocatalog_http_requests_total{method="POST",'
                      'route="/data/collections/{collection_id}/items",status="2xx"})',
                      lambda v: v >= 5) == 5
    # the job ran on the worker, which says so on its own port
    assert eventually(stack, 'sum(geocatalog_jobs_ended_total{job="geocatalog-worker",'
                      'process="echo",status="successful"})', lambda v: v >= 1) == 1
    assert httpx.get(job_url, headers=alice).json()["status"] == "successful"
    assert eventually(stack, 'sum(geocatalog_job_duration_seconds_count{'
                      'job="geocatalog-worker",process="echo"})', lambda v: v >= 1) == 1
    for job in ("geocatalog", "geocatalog-worker"):
        assert eventually(stack, f'up{{job="{job}"}}', lambda v: v == 1) == 1
    # gauges of live processes add up: two API processes of 3 connections a pool at most
    assert eventually(stack, 'sum(geocatalog_db_pool_max_connections{job="geocatalog",'
                      'pool="reader"})', lambda v: v == 6) == 6
    assert eventually(stack, 'max(geocatalog_job_workers{job="geocatalog"})',
                      lambda v: v >= 1) >= 1
    assert eventually(stack, 'sum(geocatalog_rendered_items_hits_total)',
                      lambda v: v >= 30) >= 30  # 40 reads of 5 items in 2 processes
    # the queue as the job store holds it
    with psycopg.connect(database) as conn:
        queued = conn.execute("SELECT count(*) FROM processes.jobs "
                              "WHERE status = 'accepted'").fetchone()[0]
    assert eventually(stack, 'max(geocatalog_jobs{job="geocatalog-worker",'
                      'status="accepted"})', lambda v: v == queued) == queued

    rules = httpx.get(f"{stack['prometheus']}/api/v1/rules").json()["data"]["groups"]
    loaded = {rule["name"]: rule["health"] for group in rules for rule in group["rules"]}
    assert loaded == dict.fromkeys(
        ("GeocatalogErrorRate", "GeocatalogSlowRequests", "GeocatalogPoolExhausted",
         "GeocatalogJobQueueStuck", "GeocatalogNoJobWorker", "GeocatalogWorkerDown",
         "GeocatalogDown"), "ok")


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium")
def test_prometheus_graph_of_a_load(stack) -> None:
    """A load of searches and item pages for 20 s, as Prometheus graphs it."""
    api = stack["api"]
    paths = ["/data/search?limit=10", "/data/collections", "/data/search?bbox=0,0,20,20",
             "/data/conformance"]
    deadline = time.monotonic() + 20

    def load(n: int) -> int:
        answered = 0
        with httpx.Client(base_url=api) as client:
            while time.monotonic() < deadline:
                answered += client.get(paths[n % len(paths)]).status_code == 200
        return answered

    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(load, range(4))) > 0
    expression = 'sum by (route) (rate(geocatalog_http_requests_total{job="geocatalog"}[10s]))'
    assert eventually(stack, 'sum(rate(geocatalog_http_requests_total{route="/data/search"}'
                      '[10s]))', lambda v: v > 0) > 0
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"{stack['prometheus']}/classic/graph?g0.expr={quote(expression)}"
                  "&g0.tab=0&g0.range_input=1m")
        page.wait_for_selector(".graph_area svg path.path", state="attached")
        SHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SHOT, type="jpeg", quality=70, full_page=True)
    assert SHOT.stat().st_size > 10_000


PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


def test_alert_rules_check_and_fire_as_their_tests_say() -> None:
    checked = subprocess.run([PROMTOOL, "check", "rules", str(ALERTS)], capture_output=True,
                             text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 7 rules found" in checked.stdout
    tested = subprocess.run([PROMTOOL, "test", "rules", "alerts.test.yml"],
                            cwd=ALERTS.parent, capture_output=True, text=True, check=False)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_the_dashboard_reads_only_metrics_the_service_exports(stack) -> None:
    """Every metric the Grafana dashboard's queries name is one geocatalog exports."""
    import json
    import re

    dashboard = json.loads((ROOT / "docker" / "grafana" / "geocatalog.json").read_text())
    named = {name for panel in dashboard["panels"] for target in panel["targets"]
             for name in re.findall(r"\b(geocatalog_\w+?)(?:_bucket|_count|_sum)?\b",
                                    target["expr"])}
    exported = {m.group(1) for m in re.finditer(
        r"^# TYPE (\w+) ", httpx.get(f"{stack['api']}/metrics").text, re.M)}
    worker = {m.group(1) for m in re.finditer(
        r"^# TYPE (\w+) ", httpx.get(stack["worker_metrics"]).text, re.M)}
    counters = {f"{name}_total" for name in exported | worker}
    assert named and named <= exported | worker | counters, named - exported - worker - counters
