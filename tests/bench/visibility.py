"""Private and project data (issue: visibility), in paired slices (`paired`):

1. What visibility costs public reads: this checkout's server against the one of `--before`
   (a git ref, served from its own worktree), every item public, anonymous and then with a
   token. On two data sets: the CF set (`cf_scale`: 5,000 collections, 200,000 items by
   default) and `make bench`'s main set (three collections, 200,000 items, every scenario
   of `run`). Each server reads its own copy of the same plain pgstac database (loaded once
   by `pypgstac load`), migrated by its own checkout's `migrate`: the server before reads
   the schema it was written for.
2. A signed-in search where half the items are hidden (private to their owners, or shared
   with one of 40 projects): the same server, the same requests, alternately with a user's
   token (their own items and two projects' as well) and anonymously.

    python -m tests.bench.visibility [--before REF] [--seconds 4] [--pairs 6] [--data-set cf]

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

from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.platform.database.cluster import Cluster
from stac_ext.platform.database.migrations import migrate
from stac_ext.settings import Settings
from tests.bench import (
    cf_dataset,
    cf_scale,
    database,
    dataset,
    paired,
    scenarios,
    servers,
    wrk,
)

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
#: Migrates database argv[2] with the checkout at argv[1], its code first on the path.
OLD_MIGRATE = """
import pathlib, sys
sys.path.insert(0, sys.argv[1])
if pathlib.Path(sys.argv[1], "stac_ext", "migration_sets.py").exists():
    from stac_ext.migration_sets import BOOTSTRAPS, MIGRATIONS
    from stac_ext.platform.database.migrations import migrate
else:  # a checkout from before the platform layer
    from stac_ext.database.migration_sets import BOOTSTRAPS, MIGRATIONS
    from stac_ext.database.migrations import migrate
migrate(sys.argv[2], MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
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


def plain_database(cluster: Cluster, name: str, folder: Path, files: list[Path]) -> str:
    """Database `name`: plain pgstac holding `folder`'s collections.ndjson and the item
    `files`, loaded by pypgstac (made once: kept while its stamp is there); its name."""
    stamp = folder / f".plain-{name}"
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                              (name,)).fetchone()
        if exists and stamp.exists():
            return name
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    print(f"pypgstac load into {name} ...", flush=True)
    cf_scale._pypgstac_load(cf_scale._database_dsn(cluster.dsn, name), folder, files)
    stamp.touch()
    return name


def main_set_files(folder: Path, items: int) -> list[Path]:
    """`make bench`'s main set as ndjson (its collections and its POST item target)."""
    files = [folder / "items.ndjson"]
    stamp = folder / f".written-{items}"
    if not stamp.exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "collections.ndjson").write_text("".join(
            json.dumps(dataset.collection(c)) + "\n"
            for c in (*dataset.COLLECTIONS, dataset.WRITES)))
        with files[0].open("w") as out:
            for item in dataset.items(items):
                out.write(json.dumps(item) + "\n")
        stamp.touch()
    return files


def migrated(cluster: Cluster, template: str, name: str, code: Path | None) -> str:
    """A copy of `template` named `name`, migrated by the checkout `code` (None: this
    one) and analysed; its DSN."""
    dsn = clone(cluster, template, name)
    if code is None:
        migrate(dsn, MIGRATIONS, echo=lambda _: None, bootstraps=BOOTSTRAPS)
    else:
        subprocess.run([sys.executable, "-c", OLD_MIGRATE, str(code), dsn], check=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    return dsn


def compare_public(new: servers.Server, old: servers.Server,
                   reqs: dict[str, list[wrk.Request]], token: str, *, writes: set[str],
                   pairs: int, seconds: float, connections: int) -> dict[str, Any]:
    """Today's server against the one before, scenario by scenario, anonymous and with a
    token (the scenarios named in `writes` with a token only)."""
    out: dict[str, Any] = {}
    with servers.serving(new, cf_scale.PORT) as a, servers.serving(old, cf_scale.PORT + 1) as b:
        for name, requests in reqs.items():
            for who, with_token in (("anonymous", ""), ("token", token))[name in writes:]:
                pair = paired.compare(a, b, requests, pairs=pairs, seconds=seconds,
                                      connections=connections, token=with_token)
                out[f"{name}, {who}"] = pair
                print(f"today / before  {name:38} {who:9} {pair['ratio']:.3f} "
                      f"(errors {pair['errors']['a']} / {pair['errors']['b']})", flush=True)
    return out


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


def old_server(folder: Path, dsn: str, data_dir: Path,
               name: str = "geocatalog-before") -> servers.Server:
    """The geocatalog of a checkout, as `servers.geocatalog` configures today's."""
    today = servers.geocatalog(name, dsn, data_dir)
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


def hidden_half(dsn: str, folder: Path, token: str, items: int, collections: int, *,
                pairs: int, seconds: float, connections: int,
                scenario: list[str] | None) -> tuple[int, dict[str, Any]]:
    """Half the CF set's items hidden, then each scenario signed in against anonymously on
    the same server: how many were hidden, and each scenario's pair."""
    hidden = hide_half(dsn)
    print(f"{hidden} of {items} items hidden", flush=True)
    found: dict[str, Any] = {}
    with servers.serving(servers.geocatalog("geocatalog", dsn, folder), cf_scale.PORT) as ours:
        for name in [n for n in SCENARIOS
                     if n != "single item" and (not scenario or n in scenario)]:
            pair = abba(ours, cf_scale.requests(name, collections, items), pairs=pairs,
                        seconds=seconds, connections=connections, tokens=(token, ""))
            found[name] = pair
            print(f"signed in / anonymous  {name:38} {pair['ratio']:.3f} "
                  f"(req/s {pair['rps'][0]} / {pair['rps'][1]}, errors {pair['errors']})",
                  flush=True)
    database.end_sessions(dsn)
    return hidden, found


def main(
    before: Annotated[str, typer.Option(help="the git ref whose server is compared")] =
        "HEAD~1",
    seconds: Annotated[float, typer.Option(help="seconds per slice")] = 4,
    pairs: Annotated[int, typer.Option(help="slice pairs per comparison")] = 6,
    connections: Annotated[int, typer.Option()] = 8,
    items: Annotated[int, typer.Option(help="items of the CF set and of the main set")] =
        200_000,
    collections: Annotated[int, typer.Option(help="collections of the CF set")] = 5_000,
    data_dir: Annotated[Path, typer.Option()] = Path(".bench"),
    pg_port: Annotated[int, typer.Option()] = 5451,
    data_set: Annotated[list[str] | None, typer.Option(
        help="only these data sets: cf, main (part 2 is the CF set's)")] = None,
    scenario: Annotated[list[str] | None, typer.Option(help="only these scenarios")] = None,
) -> None:
    wanted = [name for name in data_set or ["cf", "main"] if name in ("cf", "main")]
    folder = data_dir.resolve() / "cf"
    cluster = Cluster(datadir=folder / "pg", port=pg_port, settings={})
    cluster.start()
    shape = cf_scale.Shape(collections, items)
    settings = Settings(database_url=cluster.dsn, geocatalog_data_dir=folder)
    assert settings.local_issuer
    issuer = LocalIssuer(settings.issuer_key_file, settings.local_issuer)
    token = issuer.mint(READER, settings.data_client_id, GROUPS, [], 24 * 3600)
    results: dict[str, Any] = {"shape": {"items": items, "collections": collections},
                               "before": before, "public": {}, "hidden_half": {}}
    code = checkout(before, data_dir.resolve() / "checkouts")

    # 1. public reads, today's server against the one before, each on its own schema
    cf_folder = folder / "files" / shape.name
    cf_plain = plain_database(cluster, f"{shape.name}_plain", cf_folder,
                              cf_dataset.write(cf_folder, collections, items)) \
        if "cf" in wanted else ""
    main_folder = folder / "files" / f"main_{items}"
    today: dict[str, str] = {}  # each set's copy migrated by this checkout
    for set_name in wanted:
        writes: set[str] = set()
        if set_name == "cf":
            plain, reqs = cf_plain, {name: cf_scale.requests(name, collections, items)
                                     for name in SCENARIOS}
        else:
            plain = plain_database(cluster, f"main_{items}_plain", main_folder,
                                   main_set_files(main_folder, items))
            reqs = {s.name: scenarios.requests(s.name, items, True)
                    for s in scenarios.SCENARIOS}
            writes = {s.name for s in scenarios.SCENARIOS if not s.reads}
        reqs = {k: v for k, v in reqs.items() if not scenario or k in scenario}
        print(f"{set_name} set: migrating a copy for each server ...", flush=True)
        old_dsn = migrated(cluster, plain, f"vis_before_{set_name}", code)
        today[set_name] = migrated(cluster, plain, f"vis_after_{set_name}", None)
        old = old_server(code, old_dsn, folder)
        new = servers.geocatalog("geocatalog", today[set_name], folder)
        results["public"][set_name] = compare_public(
            new, old, reqs, token, writes=writes, pairs=pairs, seconds=seconds,
            connections=connections)
        database.end_sessions(old_dsn)
        database.end_sessions(today[set_name])

    # 2. half hidden (on the CF set's copy of part 1, its reads done): signed in against
    # anonymous, same server
    if "cf" in wanted:
        results["shape"]["hidden"], results["hidden_half"] = hidden_half(
            today["cf"], folder, token, items, collections, pairs=pairs, seconds=seconds,
            connections=connections, scenario=scenario)
    (data_dir / "visibility-results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    typer.run(main)
