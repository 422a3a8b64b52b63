"""The printed table: per scenario, each server's req/s, p50, p95 and errors, and geocatalog's
ratios of successful answers per second."""

from __future__ import annotations

import statistics
from typing import Any

from tests.bench import scenarios, synchronous


def _mean(runs: list[dict[str, float]], key: str) -> float:
    return statistics.fmean(r[key] for r in runs)


def _ok_rps(runs: list[dict[str, float]]) -> float:
    """Answers that were not errors, per second: a server that fails fast is not fast."""
    return statistics.fmean((r["requests"] - r.get("status_errors", r["errors"]))
                            / r["seconds"] for r in runs)


def table(results: dict[str, Any]) -> str:
    servers = results["servers"]
    names = [n for n in ("stock", "stock-tuned", "rustac", "geocatalog") if n in servers]
    head = "| scenario | " + " | ".join(f"{n} req/s (p50 / p95 ms, errors)" for n in names)
    ratios = [("stock", "x stock"), ("stock-tuned", "x tuned"), ("rustac", "x rustac")]
    ratios = [(peer, label) for peer, label in ratios
              if peer in servers and "geocatalog" in servers]
    head += "".join(f" | {label}" for _, label in ratios) + " |"
    lines = [head, "|" + "---|" * (1 + len(names) + len(ratios))]
    for scenario in scenarios.SCENARIOS:
        cells = []
        for n in names:
            runs = servers[n]["scenarios"].get(scenario.name)
            cells.append("-" if not runs else f"{_mean(runs, 'rps'):.0f} "
                         f"({_mean(runs, 'p50_ms'):.1f} / {_mean(runs, 'p95_ms'):.1f}, "
                         f"{sum(r['errors'] for r in runs):.0f})")
        for peer, _ in ratios:
            ours = servers["geocatalog"]["scenarios"].get(scenario.name)
            theirs = servers[peer]["scenarios"].get(scenario.name)
            cells.append("-" if not (ours and theirs) else "no answer"
                         if not _ok_rps(theirs) else f"{_ok_rps(ours) / _ok_rps(theirs):.2f}")
        lines.append(f"| {scenario.name} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("peak RSS per uvicorn worker (MB): " + ", ".join(
        f"{n} {s['peak_rss_mb']:.0f}" for n, s in servers.items()))
    for key, what in (("content_cost", "generated content + owner extension cost "
                       "(geocatalog vs geocatalog-bare"),
                      ("metrics_cost", "metrics cost (geocatalog vs geocatalog-nometrics")):
        if cost := results.get(key):
            lines.append(f"{what} in alternating slices; throughput 1 - full/bare req/s, "
                         "median of pairs; API CPU per request):")
            for name, c in cost.items():
                lines.append(f"  {name}: throughput {c['throughput_pct']:.1f} %, API CPU "
                             f"{c['cpu_ms_per_request']['a']:.2f} vs "
                             f"{c['cpu_ms_per_request']['b']:.2f} ms/request "
                             f"(+{c['api_cpu_pct']:.1f} %)")
    if floor := results.get("sql_floor_ms"):
        c1 = results.get("concurrency_1", {})
        lines.append("100-item page at concurrency 1 vs pgstac search() SQL p50 (1 connection; "
                     "SQL as stock calls it / as geocatalog calls it):")
        for name, ms in floor.items():
            lines.append(f"  {name}: SQL {ms['as_stock']:.1f} / {ms['as_geocatalog']:.1f} ms")
        for name, turns in c1.items():
            lines.append(f"  {name}, page and SQL in turns: geocatalog page "
                         f"{turns['p50_ms']:.1f} ms, SQL {turns['sql_p50_ms']:.1f} ms = "
                         f"{turns['ratio']:.2f}x the SQL (median of rounds "
                         f"{' '.join(f'{r:.2f}' for r in turns['ratios'])})")
    for peer, verdict in results.get("same_answers", {}).items():
        lines.append(f"same items in the same order as {peer}: "
                     f"{'yes' if verdict['identical'] else 'NO: ' + ', '.join(verdict['differ'])}"
                     f" ({verdict['queries']} queries)")
    if cat := results.get("catalogs"):
        lines.append(f"catalogs ({cat['catalogs']} catalogs, depth {cat['depth']}): deep GET p50 "
                     f"{cat['deep_get_p50_ms']:.1f} ms; force-delete of {cat['subtree']} "
                     f"nodes {cat['force_delete_ms']:.0f} ms")
    if scoped := results.get("scoped_search"):
        lines.append(f"catalog search ({scoped['item_links']} item links, "
                     f"{scoped['collection_links']} collection links in a 10,000-node "
                     f"subtree, limit=100): p50 {scoped['scoped_p50_ms']:.1f} ms vs plain "
                     f"/search with the same filter {scoped['plain_p50_ms']:.1f} ms = "
                     f"{scoped['ratio']:.2f}x; same items: "
                     f"{'yes' if scoped['same_items'] else 'NO'}")
    if jobs := results.get("jobs"):
        lines.append(f"jobs ({jobs.get('topology', '')}; {jobs['submitted']} echo by "
                     f"{jobs.get('clients', '?')} concurrent clients): submit p50 "
                     f"{jobs['submit_p50_ms']:.0f} ms, accepted->running p50 "
                     f"{jobs['queued_p50_ms']:.0f} ms, successful {jobs['successful']}, "
                     f"lost {jobs['lost']}, all done in {jobs['all_done_s']:.1f} s; "
                     "one job on an idle worker: accepted->running p50 "
                     f"{jobs['idle_queued_p50_ms']:.0f} ms, submitted->successful p50 "
                     f"{jobs.get('idle_done_p50_ms', float('nan')):.0f} ms")
    if fair := results.get("fair_share"):
        lines.append(f"jobs in a burst from {fair['users']} users ({fair['topology']}; "
                     f"{fair['per_user']} echo each, default quotas): {fair['submitted']} "
                     f"accepted, {fair['refused']} refused, {fair['successful']} successful; "
                     f"all done in {fair['all_done_s']:.1f} s (target 20 s); each user's "
                     f"last job, slowest / fastest user {fair['fairness']:.2f}x "
                     "(target 1.5x)")
    for change, seen in (results.get("freshness") or {}).items():
        lines.append(f"items limit=10 after {change}, first p50 against settled, median "
                     f"{seen['ratio_p50']}x: " + "; ".join(
                         f"{r['first']['p50_ms']:.1f} ms ({r['first']['after_s']} s after, "
                         f"{r['first']['errors']} errors) / {r['settled']['p50_ms']:.1f} ms "
                         f"({r['settled']['errors']} errors)" for r in seen["rounds"]))
    for warm, ran in (results.get("deployed") or {}).items():
        lines.append(f"sync jobs one at a time, {ran['pause_s']} s apart, alternated, "
                     f"JOB_WARM_SANDBOXES={warm}: " + "; ".join(
                         _times(kind, ran[kind]) for kind in ("built-in echo", "deployed CWL")) +
                     (f"; deployed CWL back to back: {_times('', ran['burst'])} (target "
                      "p50 200 ms, p95 400 ms)" if "burst" in ran else ""))
    if boxed := results.get("containers"):
        lines.append("a deployed CDO tool, sync, alternated: " + "; ".join(
            f"{kind} p50 {boxed[kind]['p50_ms']} ms, p95 {boxed[kind]['p95_ms']} ms "
            f"({boxed[kind]['jobs']} jobs, {boxed[kind]['errors']} errors)"
            for kind in ("bubblewrap", "container")) +
            f"; container/bubblewrap p50 {boxed.get('ratio_p50')} (target 1.3x)")
    if batch := results.get("slurm"):
        short = batch["short_jobs"]
        lines.append("echo jobs, sync, one at a time: " + "; ".join(
            f"{kind} p50 {batch[kind]['p50_ms']} ms, p95 {batch[kind]['p95_ms']} ms "
            f"({batch[kind]['jobs']} jobs, {batch[kind]['errors']} errors)"
            for kind in ("local", "slurm")) +
            f"; Slurm's overhead p50 {batch.get('overhead_p50_ms')} ms; "
            f"{short['submitted']} short jobs at once on Slurm ({batch['cluster']}): all "
            f"done in {short['all_done_s']:.1f} s, {short['successful']} successful, "
            f"{short['failed']} failed, {short['lost']} lost")
    if seen := results.get("explorer"):
        lines.append("data explorer (demo S3, median / max of "
                     f"{seen['rounds']} rounds): " + "; ".join(
                         f"{name} {found['median_s']} / {found['max_s']} s (target "
                         f"{found['target_s']} s, {found['read_mib']} MiB read)"
                         for name, found in seen["scenarios"].items()))
    if staged := results.get("staging"):
        lines.append(f"staging ({staged['bytes'] / 2**20:.0f} MiB NetCDF, local S3, median of "
                     f"{staged['rounds']}): stage in + out {staged['seconds']['stage in + out']}"
                     f" s vs plain copy {staged['seconds']['plain copy']} s = "
                     f"{staged['ratio']:.2f}x (target 1.5x or less)")
    if replicated := results.get("synchronous"):
        lines.append(f"writes with synchronous replication (three Patroni members on this "
                     f"machine) against one server:\n{synchronous.table(replicated)}")
    return "\n".join(lines)


def _times(kind: str, found: dict[str, Any]) -> str:
    return (f"{kind} p50 {found['p50_ms']} ms, p95 {found['p95_ms']} ms ({found['jobs']} "
            f"jobs, {found['errors']} errors)").strip()
