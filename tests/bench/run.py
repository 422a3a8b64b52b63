"""`make bench`: geocatalog vs stock stac-fastapi-pgstac and rustac on one database (the
200,000-item set of three collections), our own features, then the CF-scale set and its
cost curve (`cf_scale`); on request, the CF set grown in items (`cf_items_curve`).

    .venv/bin/python -m tests.bench.run [--seconds 15] [--runs 2] [--items 200000] [--no-cf]
        [--cf-items-curve 10000000]
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.platform.database.cluster import Cluster
from stac_ext.settings import Settings
from tests.bench import (
    cf_families,
    cf_items_curve,
    cf_scale,
    containers,
    database,
    deployed,
    explorer,
    fair_share,
    features,
    freshness,
    paired,
    report,
    scenarios,
    servers,
    slurm,
    staging,
    subscriptions,
    synchronous,
    wrk,
)

app = typer.Typer(add_completion=False)
PORT = 8097
#: page / SQL rounds of the concurrency-1 comparison
C1_ROUNDS = 4


def _answers(running: servers.Running, total: int) -> dict[str, list[list[str]]]:
    """The item ids (in order) each read request answers: compared across servers."""
    seen: dict[str, list[list[str]]] = {}
    with httpx.Client(timeout=60) as client:
        for scenario in scenarios.SCENARIOS:
            if not scenario.reads:
                continue
            ids: list[list[str]] = []
            for r in scenarios.requests(scenario.name, total, running.server.geocatalog)[:12]:
                answer = client.request(r.method, running.url + r.path,
                                        content=r.body or None,
                                        headers={"Content-Type": "application/json"})
                if answer.is_error and running.server.command:  # a peer that cannot
                    print(f"{running.server.name}: {scenario.name} not supported "
                          f"({answer.status_code} {answer.text[:80]})", flush=True)
                    ids = []
                    break
                answer.raise_for_status()
                body = answer.json()
                ids.append([f["id"] for f in body["features"]] if "features" in body
                           else [body["id"]])
            if ids:
                seen[scenario.name] = ids
    return seen


@app.command()
def main(
    seconds: Annotated[float, typer.Option(help="measured seconds per scenario")] = 15,
    warmup: Annotated[float, typer.Option(help="warm-up seconds per scenario")] = 3,
    runs: Annotated[int, typer.Option(help="runs of every server")] = 2,
    items: Annotated[int, typer.Option(help="synthetic items")] = 200_000,
    connections: Annotated[int, typer.Option(help="concurrent connections")] = 8,
    data_dir: Annotated[Path, typer.Option(help="cluster and results")] = Path(".bench"),
    pg_port: Annotated[int, typer.Option(help="the benchmark cluster's port")] = 5449,
    only: Annotated[list[str] | None, typer.Option(help="only these servers")] = None,
    feature_runs: Annotated[bool, typer.Option(help="catalogs tree and jobs")] = True,
    features_only: Annotated[list[str] | None, typer.Option(
        "--feature", help="only these features: catalogs, scoped_search, jobs, fair_share, "
                          "deployed, "
                          "staging, explorer, containers, slurm, freshness, "
                          "subscriptions, synchronous")
    ] = None,
    cf: Annotated[bool, typer.Option(help="the CF-scale set and its cost curve")] = True,
    cf_items: Annotated[int, typer.Option(help="items of the CF-scale shapes")] = cf_scale.ITEMS,
    cf_collections: Annotated[int, typer.Option(help="collections of the CF set")] = 5_000,
    curve_sizes: Annotated[list[int] | None, typer.Option(
        "--cf-items-curve", help="also the CF set at these sizes in items, beside "
                                 "--cf-items (10000000: about an hour)")] = None,
) -> None:
    data_dir = data_dir.resolve()
    dsn = database.prepare(data_dir, pg_port, items)
    settings, issuer = servers.local_issuer(dsn, data_dir)
    token = servers.writer_token(settings, issuer)

    everyone = servers.peers(dsn, data_dir)
    peers = [p for p in everyone.values() if not only or p.name in only]
    results: dict[str, Any] = {
        "machine": f"{platform.node()} {platform.machine()} {_cpus()} cores, "
                   f"{platform.python_implementation()} {platform.python_version()}",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": {"seconds": seconds, "warmup": warmup, "runs": runs, "items": items,
                     "connections": connections},
        "servers": {p.name: {"scenarios": {}, "peak_rss_mb": 0.0} for p in peers},
    }
    answers: dict[str, dict[str, list[list[str]]]] = {}
    load = Load(dsn, items, seconds, warmup, connections, token)
    for run in range(runs):
        for peer in peers:
            if peer.name not in ("geocatalog-bare", "geocatalog-nometrics"):
                load.one_server(run, peer, results, answers)
    if {"geocatalog", "geocatalog-bare"} <= {p.name for p in peers}:
        results["content_cost"] = load.paired_cost(
            "content", everyone["geocatalog"], everyone["geocatalog-bare"],
            scenarios.HUNDREDS, results)
    if {"geocatalog", "geocatalog-nometrics"} <= {p.name for p in peers}:
        results["metrics_cost"] = load.paired_cost(
            "metrics", everyone["geocatalog"], everyone["geocatalog-nometrics"],
            scenarios.CHEAPEST, results)
    results["sql_floor_ms"] = {
        name: {"as_stock": round(database.search_floor(dsn, bodies, as_geocatalog=False), 2),
               "as_geocatalog": round(database.search_floor(dsn, bodies, as_geocatalog=True),
                                      2)}
        for name, bodies in scenarios.search_bodies().items()}
    results["same_answers"] = _compare(answers)
    if feature_runs and "geocatalog" in results["servers"]:
        _features(dsn, settings, issuer, everyone["geocatalog"], results,
                  features_only or list(FEATURES))
    if feature_runs and "freshness" in (features_only or FEATURES):
        results["freshness"] = freshness.run(Cluster(datadir=data_dir / "pg", port=pg_port),
                                             data_dir, PORT, items, connections=connections)
    if feature_runs and "synchronous" in (features_only or FEATURES):  # databases of its own
        results["synchronous"] = synchronous.run(data_dir, seconds=seconds, warmup=warmup,
                                                 connections=connections)

    if cf:
        results["cf_scale"] = cf_scale.run(data_dir, items=cf_items, collections=cf_collections,
                                           seconds=max(2.0, seconds * 2 / 3), warmup=warmup,
                                           connections=connections, only=only)
    if cf:  # the variables tree at the CF set's number of collections
        results["cf_families"] = cf_families.run(data_dir, collections=cf_collections)
    if curve_sizes:
        results["cf_items"] = cf_items_curve.run(
            data_dir, (cf_items, *curve_sizes), collections=cf_collections,
            seconds=max(2.0, seconds * 2 / 3), warmup=warmup, connections=connections,
            only=only)
    out = data_dir / "results.json"
    out.write_text(json.dumps(results, indent=2))
    print()
    print(report.table(results))
    if cf:
        print()
        print(cf_scale.table(results["cf_scale"]))
        print()
        print(cf_families.table(results["cf_families"]))
    if curve_sizes:
        print()
        print(cf_items_curve.table(results["cf_items"]))
    print(f"\nraw figures: {out}")


@dataclass(frozen=True)
class Load:
    """The scenarios' load against one server at a time (wrk in its own process)."""

    dsn: str
    items: int
    seconds: float
    warmup: float
    connections: int
    token: str

    def one_server(self, run: int, peer: servers.Server, results: dict[str, Any],
                   answers: dict[str, dict[str, list[list[str]]]]) -> None:
        database.reset_writes(self.dsn)
        names = [s.name for s in scenarios.SCENARIOS]
        with servers.serving(peer, PORT) as running:
            if run == 0:
                answers[peer.name] = _answers(running, self.items)
            if peer.command:  # rustac: the reads it answers (it has no transactions)
                names = [name for name in names if name in answers[peer.name]]
            for name in names:
                figures = self.scenario(running, run, peer, name)
                results["servers"][peer.name]["scenarios"].setdefault(name, []).append(
                    figures.as_dict())
            if run == 0 and peer.geocatalog and peer.name == "geocatalog":
                results["concurrency_1"] = {
                    name: self.concurrency_1(running, name) for name in scenarios.HUNDREDS[:2]}
            _note_rss(results, peer, running)
        database.end_sessions(self.dsn)

    def concurrency_1(self, running: servers.Running, name: str,
                      rounds: int = C1_ROUNDS) -> dict[str, Any]:
        """A 100-item page at concurrency 1 against pgstac's `search()` as geocatalog calls
        it, measured in turns (page, SQL, page, SQL ...) so that both see the same VM: the
        median of the rounds' ratios (the VM drifts between a scenario and the end of the
        run, where the SQL floors of the table are taken)."""
        requests = scenarios.requests(name, self.items, True)
        bodies = scenarios.search_bodies()[name]
        pages, sqls = [], []
        for _ in range(rounds):
            pages.append(wrk.run(running.url, requests, seconds=max(1.0, self.seconds / 6),
                                 connections=1, token=self.token, tag="c1"))
            sqls.append(database.search_floor(self.dsn, bodies, as_geocatalog=True, repeat=3))
        ratios = [page.p50_ms / sql for page, sql in zip(pages, sqls, strict=True)]
        return {"p50_ms": statistics.median(p.p50_ms for p in pages),
                "sql_p50_ms": statistics.median(sqls), "ratio": statistics.median(ratios),
                "ratios": [round(r, 3) for r in ratios]}

    def paired_cost(self, what: str, full: servers.Server, bare: servers.Server,
                    names: list[str], results: dict[str, Any]) -> dict[str, Any]:
        """What a part of geocatalog costs (`what`): geocatalog against itself without it,
        both running, in alternating slices (`paired`), per scenario of `names`:
        throughput (1 - full/bare req/s) and the API's CPU per request."""
        cost: dict[str, Any] = {}
        with servers.serving(full, PORT) as a, servers.serving(bare, PORT + 1) as b:
            for name in names:
                pair = paired.compare(a, b, scenarios.requests(name, self.items, True),
                                      pairs=COST_PAIRS, seconds=max(2, self.seconds / 3),
                                      connections=self.connections, token=self.token)
                cpu = pair["cpu_ms_per_request"]
                cost[name] = {**pair, "throughput_pct": 100 * (1 - pair["ratio"]),
                              "api_cpu_pct": 100 * (cpu["a"] / cpu["b"] - 1)}
                print(f"{what} cost {name:40} throughput {cost[name]['throughput_pct']:5.1f} %"
                      f" (pairs {pair['ratios']}), API CPU {cpu['a']:.2f} vs "
                      f"{cpu['b']:.2f} ms/request", flush=True)
            _note_rss(results, full, a)
            _note_rss(results, bare, b)
        return cost

    def scenario(self, running: servers.Running, run: int, peer: servers.Server,
                 name: str) -> wrk.Figures:
        reqs = scenarios.requests(name, self.items, peer.geocatalog)
        tag = f"r{run}-{peer.name}-{int(time.time())}"
        wrk.run(running.url, reqs, seconds=self.warmup, connections=self.connections,
                token=self.token, tag=tag + "w")
        figures = wrk.run(running.url, reqs, seconds=self.seconds,
                          connections=self.connections, token=self.token, tag=tag)
        print(f"run {run + 1} {peer.name:16} {name:40} {figures.rps:8.1f} req/s "
              f"p50 {figures.p50_ms:6.1f} ms p95 {figures.p95_ms:6.1f} ms"
              f"{'  ERRORS ' + str(figures.errors) if figures.errors else ''}", flush=True)
        return figures


def _note_rss(results: dict[str, Any], server: servers.Server,
              running: servers.Running) -> None:
    """The server's peak RSS so far, the highest seen over its runs."""
    slot = results["servers"][server.name]
    slot["peak_rss_mb"] = round(max(slot["peak_rss_mb"], running.peak_rss_mb()), 1)


FEATURES = ("catalogs", "scoped_search", "jobs", "fair_share", "deployed", "staging",
            "explorer", "containers", "slurm", "freshness", "subscriptions", "synchronous")
#: Seconds of each POST item slice with and without subscriptions.
SUBSCRIPTION_SLICE_SECONDS = 8
#: ABBA-ordered pairs of slices per scenario for the cost of a part (generated content,
#: metrics)
COST_PAIRS = 6
#: The job engine's topology in the benchmark (compose's: API and workers apart).
JOB_WORKERS, JOB_CONCURRENCY = 1, 4
#: Echo jobs submitted at once by one user.
ECHO_JOBS = 1000
#: `geocatalog worker` processes of the many users' burst (`fair_share`).
FAIR_SHARE_WORKERS = 2


def _features(dsn: str, settings: Settings, issuer: LocalIssuer, geocatalog: servers.Server,
              results: dict[str, Any], chosen: list[str]) -> None:
    """The catalogs tree and the job engine, measured on geocatalog alone."""
    admin = issuer.mint("bench-admin", settings.data_client_id, [], [settings.admin_right],
                        24 * 3600)
    worker = issuer.mint("bench-jobs", settings.process_client_id, [], [], 24 * 3600)
    with servers.serving(geocatalog, PORT) as running:
        if "catalogs" in chosen:
            results["catalogs"] = features.catalog_tree(dsn, running, admin)
        if "scoped_search" in chosen:
            results["scoped_search"] = features.scoped_search(dsn, running)
        if "subscriptions" in chosen:  # writes with 10,000 subscriptions and with none
            writer = issuer.mint("bench-writer", settings.data_client_id, [], [], 24 * 3600)
            results["subscriptions"] = subscriptions.run(
                dsn, running, writer, seconds=SUBSCRIPTION_SLICE_SECONDS)
            print(subscriptions.table(results["subscriptions"]), flush=True)
        results["servers"]["geocatalog"]["feature_peak_rss_mb"] = round(
            running.peak_rss_mb(), 1)
    if "staging" in chosen:  # a job's data in and out, against a plain copy
        results["staging"] = staging.run()
    if "explorer" in chosen:  # a 1 GB Zarr, ten years of days, ten million rows, on S3
        writer = issuer.mint("bench-explorer", settings.data_client_id, [], [], 24 * 3600)
        results["explorer"] = explorer.run(dsn, settings.data_dir, PORT, admin, writer)
    if "jobs" in chosen:
        database.reset_jobs(dsn)
        # one user's thousand jobs at once: quotas that queue them all and let them take
        # every worker's slot, so that the engine is measured, not the quota (the defaults
        # refuse the 101st with a 429 and run one of a user's jobs at a time)
        jobs = servers.job_service(dsn, settings.data_dir, JOB_USER_QUEUED=str(ECHO_JOBS),
                                   JOB_USER_RUNNING=str(JOB_WORKERS * JOB_CONCURRENCY))
        with servers.serving(jobs, PORT) as running, servers.job_workers(
                jobs, JOB_WORKERS, JOB_CONCURRENCY):
            results["jobs"] = {**features.echo_jobs(dsn, running, worker, ECHO_JOBS),
                               "topology": f"API: uvicorn --workers 2; {JOB_WORKERS} "
                                           f"`geocatalog worker --concurrency "
                                           f"{JOB_CONCURRENCY}`"}
    if "fair_share" in chosen:  # ten users' thousand jobs at once, at the default quotas
        database.reset_jobs(dsn)
        users = [issuer.mint(f"bench-user{n}", settings.process_client_id, [], [], 24 * 3600)
                 for n in range(fair_share.USERS)]
        jobs = servers.job_service(dsn, settings.data_dir)
        with servers.serving(jobs, PORT) as running, servers.job_workers(
                jobs, FAIR_SHARE_WORKERS, JOB_CONCURRENCY):
            results["fair_share"] = {
                **fair_share.burst(dsn, running.url.removesuffix("/data") + "/processes",
                                   users, FAIR_SHARE_WORKERS),
                "topology": f"API: uvicorn --workers 2; {FAIR_SHARE_WORKERS} `geocatalog "
                            f"worker --concurrency {JOB_CONCURRENCY}`"}
    if "containers" in chosen:  # a deployed tool in a container against bubblewrap
        deployer = issuer.mint("bench-deployer", settings.process_client_id, [],
                               ["deployProcess"], 24 * 3600)
        jobs = servers.job_service(dsn, settings.data_dir)
        with servers.serving(jobs, PORT) as running, servers.job_workers(
                jobs, JOB_WORKERS, JOB_CONCURRENCY):
            results["containers"] = containers.container_jobs(
                running.url.removesuffix("/data") + "/processes", deployer)
    if "deployed" in chosen:  # a deployed CWL tool beside the built-in echo
        deployer = issuer.mint("bench-deployer", settings.process_client_id, [],
                               ["deployProcess"], 24 * 3600)
        results["deployed"] = {}
        for warm, rounds, burst in (("2", 30, 20), ("0", 10, 0)):  # with and without spares
            database.reset_jobs(dsn)
            jobs = servers.job_service(dsn, settings.data_dir, JOB_WARM_SANDBOXES=warm)
            with servers.serving(jobs, PORT) as running, servers.job_workers(
                    jobs, JOB_WORKERS, JOB_CONCURRENCY):
                results["deployed"][warm] = deployed.deployed_jobs(
                    running.url.removesuffix("/data") + "/processes", deployer, rounds, burst)
    if "slurm" in chosen:  # jobs through a one-node Slurm against the local executor
        database.reset_jobs(dsn)
        results["slurm"] = slurm.slurm_jobs(dsn, settings.data_dir, worker, PORT)


def _compare(answers: dict[str, dict[str, list[list[str]]]]) -> dict[str, Any]:
    """geocatalog's answers against stock's: the same ids in the same order, per query."""
    if "geocatalog" not in answers:
        return {}
    verdict = {}
    for peer, seen in answers.items():
        if peer == "geocatalog":
            continue
        differ = [name for name, ids in seen.items() if answers["geocatalog"].get(name) != ids]
        verdict[peer] = {"identical": not differ, "differ": differ,
                         "queries": sum(len(v) for v in seen.values())}
    return verdict


def _cpus() -> int:
    return int(subprocess.run(["nproc"], capture_output=True, text=True).stdout or 0)


if __name__ == "__main__":
    app()
