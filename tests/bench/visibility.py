"""Private and project data at the CF scale (issue: visibility), on the CF set's database
(`cf_scale`: 5,000 collections, 200,000 items by default), in paired slices (`paired`):

1. What visibility costs public reads: this checkout's server against the one of `--before`
   (a git ref, served from its own worktree), each on its own copy of the same data, every
   item public; anonymous, then with a token.
2. A signed-in search where half the items are hidden (private to their owners, or shared
   with one of 40 projects): the same server, the same requests, alternately with a user's
   token (their own items and two projects' as well) and anonymously.

    python -m tests.bench.visibility [--before REF] [--seconds 4] [--pairs 6]

Prints each comparison's median ratio and both sides' errors (a side that fails fast must
not look fast); the figures go to `.bench/visibility-results.json`.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import psycopg
import typer

from stac_ext.auth.local_issuer import LocalIssuer
from stac_ext.database.cluster import Cluster
from stac_ext.database.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.database.migrations import migrate
from stac_ext.settings import Settings
from tests.bench import cf_dataset, cf_scale, database, paired, servers, wrk

SCENARIOS = ("GET /search limit=100", "GET /search bbox+datetime limit=100",
             "items limit=100", "single item")
#: The signed-in reader: an owner of the data set, member of two of its projects.
READER, GROUPS = cf_dataset.OWNERS[0], ["group-1", "group-2"]
#: Half the items hidden: a quarter private, a quarter shared with one of 40 projects.
HIDE = """
UPDATE pgstac.{partition} SET content = jsonb_set(content, '{{properties}}',
    content->'properties' || CASE WHEN abs(hashtext(id)) % 4 = 0
        THEN '{{"visibility": "private"}}'::jsonb
        ELSE jsonb_build_object('visibility', 'project',
                                'project', 'group-' || abs(hashtext(id)) % 40) END)
WHERE abs(hashtext(id)) % 4 < 2
"""
#: Serves the checkout at argv[1] on argv[3] (`--addr host:port`), its code first on the path.
OLD_SERVER = ("import sys; sys.path.insert(0, sys.argv[1]); import uvicorn; "
              "host, port = sys.argv[3].rsplit(':', 1); "
              "uvicorn.run('stac_ext.app:create_app', factory=True, host=host, "
              "port=int(port), log_level='warning', access_log=False)")


def clone(cluster: Cluster, template: str, name: str) -> str:
    """A fresh copy of database `template` named `name`: its DSN."""
    database.end_sessions(cf_scale._database_dsn(cluster.dsn, template))
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return cf_scale._database_dsn(cluster.dsn, name)


def hide_half(dsn: str) -> int:
    """Half the items of the database made private or project, a partition per statement
    (one lock each, at PostgreSQL's defaults): how many."""
    hidden = 0
    with psycopg.connect(dsn, autocommit=True) as conn:
        partitions = [row[0] for row in conn.execute(
            "SELECT c.relname FROM pg_partition_tree('pgstac.items') t "
            "JOIN pg_class c ON c.oid = t.relid WHERE t.isleaf").fetchall()]
        for partition in partitions:
            hidden += conn.execute(HIDE.format(partition=partition)).rowcount
        conn.execute("VACUUM ANALYZE geocatalog.search_items")
    return hidden


def checkout(ref: str, root: Path) -> Path:
    """A worktree of `ref` under `root` (made once per commit)."""
    sha = subprocess.run(["git", "rev-parse", ref], capture_output=True, text=True,
                         check=True).stdout.strip()
    folder = root / sha[:12]
    if not folder.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(folder), sha], check=True,
                       capture_output=True)
    return folder


def old_server(folder: Path, dsn: str, data_dir: Path) -> servers.Server:
    """The geocatalog of a checkout, as `servers.geocatalog` configures today's."""
    today = servers.geocatalog("geocatalog-before", dsn, data_dir)
    return servers.Server(today.name, "", today.prefix, today.env, True,
                          command=(sys.executable, "-c", OLD_SERVER, str(folder)))


def abba(running: servers.Running, requests: list[wrk.Request], *, pairs: int,
         seconds: float, connections: int, tokens: tuple[str, str]) -> dict[str, Any]:
    """One server, the same requests with each of two tokens, in ABBA-ordered slices: the
    median ratio of their req/s (first / second), and both sides' errors."""
    for token in tokens:
        wrk.run(running.url, requests, seconds=2, connections=connections, token=token,
                tag=f"warm{time.time_ns()}")
    figures: dict[int, list[wrk.Figures]] = {0: [], 1: []}
    for n in range(pairs):
        for side in ((0, 1) if n % 2 == 0 else (1, 0)):
            figures[side].append(wrk.run(running.url, requests, seconds=seconds,
                                         connections=connections, token=tokens[side],
                                         tag=f"abba{time.time_ns()}"))
    ratios = [a.rps / b.rps for a, b in zip(figures[0], figures[1], strict=True)]
    return {"ratio": round(statistics.median(ratios), 3),
            "rps": [round(statistics.median(f.rps for f in figures[s]), 1) for s in (0, 1)],
            "errors": [sum(f.errors for f in figures[s]) for s in (0, 1)]}


def main(
    before: Annotated[str, typer.Option(help="the git ref whose server is compared")] =
        "HEAD~1",
    seconds: Annotated[float, typer.Option(help="seconds per slice")] = 4,
    pairs: Annotated[int, typer.Option(help="slice pairs per comparison")] = 6,
    connections: Annotated[int, typer.Option()] = 8,
    items: Annotated[int, typer.Option(help="items of the CF set")] = 200_000,
    collections: Annotated[int, typer.Option(help="collections of the CF set")] = 5_000,
    data_dir: Annotated[Path, typer.Option()] = Path(".bench"),
    pg_port: Annotated[int, typer.Option()] = 5451,
    scenario: Annotated[list[str] | None, typer.Option(help="only these scenarios")] = None,
) -> None:
    names = [name for name in SCENARIOS if not scenario or name in scenario]
    folder = data_dir.resolve() / "cf"
    cluster = Cluster(datadir=folder / "pg", port=pg_port, settings={})
    cluster.start()
    shape = cf_scale.Shape(collections, items)
    cf_scale.prepare(cluster, folder, shape, compare_load=False, workers=2)
    settings = Settings(database_url=cluster.dsn, geocatalog_data_dir=folder)
    assert settings.local_issuer
    issuer = LocalIssuer(settings.issuer_key_file, settings.local_issuer)
    token = issuer.mint(READER, settings.data_client_id, GROUPS, [], 24 * 3600)
    results: dict[str, Any] = {"shape": {"items": items, "collections": collections},
                               "before": before, "public": {}, "hidden_half": {}}

    # 1. public reads, today's server against the one before
    old_dsn = clone(cluster, shape.name, "vis_before")
    new_dsn = clone(cluster, shape.name, "vis_after")
    migrate(new_dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    old = old_server(checkout(before, data_dir.resolve() / "checkouts"), old_dsn, folder)
    new = servers.geocatalog("geocatalog", new_dsn, folder)
    with servers.serving(new, cf_scale.PORT) as a, servers.serving(old, cf_scale.PORT + 1) as b:
        for name in names:
            reqs = cf_scale.requests(name, collections, items)
            for who, with_token in (("anonymous", ""), ("token", token)):
                pair = paired.compare(a, b, reqs, pairs=pairs, seconds=seconds,
                                      connections=connections, token=with_token)
                results["public"][f"{name}, {who}"] = pair
                print(f"today / before  {name:38} {who:9} {pair['ratio']:.3f} "
                      f"(errors {pair['errors']['a']} / {pair['errors']['b']})", flush=True)
    database.end_sessions(old_dsn)

    # 2. half hidden: signed in against anonymous, same server
    hidden = hide_half(new_dsn)
    results["shape"]["hidden"] = hidden
    print(f"{hidden} of {items} items hidden", flush=True)
    with servers.serving(new, cf_scale.PORT) as ours:
        for name in [n for n in names if n != "single item"]:
            pair = abba(ours, cf_scale.requests(name, collections, items), pairs=pairs,
                        seconds=seconds, connections=connections, tokens=(token, ""))
            results["hidden_half"][name] = pair
            print(f"signed in / anonymous  {name:38} {pair['ratio']:.3f} "
                  f"(req/s {pair['rps'][0]} / {pair['rps'][1]}, errors {pair['errors']})",
                  flush=True)
    database.end_sessions(new_dsn)
    (data_dir / "visibility-results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    typer.run(main)
