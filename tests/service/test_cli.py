"""The `geocatalog` command line against a real database."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import procrastinate
import psycopg
import pystac
import pytest

from tests.support.cli import run_cli, start_cli
from tests.support.http import free_port, http_client
from tests.support.issuer import ADMIN_RIGHT
from tests.support.stac import make_collection, make_item, unique


@pytest.fixture
def db_env(database_url: str) -> dict[str, str]:
    return {"DATABASE_URL": database_url}


def test_migrate_is_idempotent(db_env: dict[str, str]) -> None:
    out = run_cli("migrate", env=db_env)
    assert out.returncode == 0, out.stderr
    assert "applied" not in out.stdout
    assert out.stdout.splitlines() == [
        "pgstac 0.10.0 (up to date)",
        f"procrastinate: procrastinate {procrastinate.__version__} schema (up to date)",
        "geocatalog 024 (up to date)", "catalogs 005 (up to date)",
        "processes 010 (up to date)", "sessions 001 (up to date)",
        "governance 002 (up to date)", "subscriptions 003 (up to date)",
        "vocabulary climate_forecast 93 (up to date)",
        "database roles: geocatalog_api, geocatalog_worker, geocatalog_job (granted)"]


async def test_load_refuses_what_the_api_refuses(db_env, tmp_path: Path,
                                                 anon: httpx.AsyncClient) -> None:
    """Invalid geometries, hrefs a browser should not follow and items without a time: one
    line, nothing loaded."""
    collection = unique("test_conv-refused_")
    path = tmp_path / "bad.ndjson"
    bowtie = _item_doc(collection, "bowtie")
    bowtie["geometry"] = {"type": "Polygon",
                          "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]}
    script = _item_doc(collection, "script")
    script["assets"]["data"]["href"] = "javascript:alert(1)"
    docs = [make_collection(collection), _item_doc(collection, "fine"), bowtie, script]
    path.write_text("\n".join(json.dumps(doc) for doc in docs))
    out = run_cli("load", str(path), env=db_env)
    assert (out.returncode, out.stderr.strip()) == (1, (
        f"{path}: Item 'bowtie' has an invalid geometry: Self-intersection[0.5 0.5] "
        "(and 1 more): fix the file; nothing was loaded"))
    assert (await anon.get(f"/data/collections/{collection}")).status_code == 404
    timeless = _item_doc(collection, "timeless")
    timeless["properties"] = {"datetime": None, "start_datetime": "2021-01-01T00:00:00Z"}
    path.write_text("\n".join(json.dumps(doc) for doc in [*docs[:2], timeless]))
    out = run_cli("load", str(path), env=db_env)
    assert (out.returncode, out.stderr.strip()) == (1, (
        f"{path}: Item 'timeless' has no time: properties.datetime, or start_datetime and "
        "end_datetime, required: fix the file; nothing was loaded"))
    assert (await anon.get(f"/data/collections/{collection}")).status_code == 404
    provider = make_collection(collection)
    provider["providers"] = [{"name": "p", "url": "javascript:alert(1)"}]
    path.write_text(json.dumps(provider))
    out = run_cli("load", str(path), env=db_env)
    assert (out.returncode, out.stderr.strip()) == (1, (
        f"{path}: collection {collection!r}: providers.0.url: a `javascript:` address is "
        "not allowed (http(s), object storage such as s3://, or a relative address): fix "
        "the file; nothing was loaded"))


def _item_doc(collection: str, item_id: str) -> dict:
    doc = make_item(item_id, collection_id=collection)
    doc["stac_version"] = "1.0.0"
    doc["bbox"] = [0, 0, 1, 1]
    doc["links"] = []
    return doc


async def test_load_with_a_visibility(app, issuer, db_env, tmp_path: Path) -> None:
    """`--visibility` (and `--project`) set on every loaded item: readers are as the API's."""
    collection = unique("test_conv-hidden_")
    path = tmp_path / "hidden.ndjson"
    lines = [make_collection(collection), _item_doc(collection, "h0")]
    path.write_text("\n".join(json.dumps(doc) for doc in lines))
    out = run_cli("load", str(path), "--owner", "alice", "--visibility", "project", env=db_env)
    assert (out.returncode, out.stderr.strip()) == (
        1, "--visibility project and --project go together: the project names the group "
           "whose members read the items.")
    out = run_cli("load", str(path), "--owner", "alice", "--visibility", "project",
                  "--project", "ocean-lab", env=db_env)
    assert out.returncode == 0, out.stderr
    url = f"/data/collections/{collection}/items/h0"
    for token, status in ((None, 404), (issuer.token("bob"), 404),
                          (issuer.token("carol", groups=["ocean-lab"]), 200),
                          (issuer.token("alice"), 200)):
        async with http_client(app, token) as client:
            assert (await client.get(url)).status_code == status, token

    # private and nobody's (no --owner): administrators' only. Any signed-in reader read it
    # (the owner's term was NULL, and a NULL rule let them by), and a write named its owner
    ownerless = tmp_path / "ownerless.ndjson"
    ownerless.write_text(json.dumps(_item_doc(collection, "h1")))
    out = run_cli("load", str(ownerless), "--visibility", "private", env=db_env)
    assert out.returncode == 0, out.stderr
    url = f"/data/collections/{collection}/items/h1"
    missing = {"code": "NotFoundError",
               "description": f"Item h1 in Collection {collection} does not exist."}
    for token in (None, issuer.token("bob")):
        async with http_client(app, token) as client:
            r = await client.get(url)
            assert (r.status_code, r.json()) == (404, missing), token
            found = (await client.get("/data/search", params={"ids": "h1"})).json()
            assert found["features"] == [], token
    async with http_client(app, issuer.token("bob")) as bob:
        r = await bob.delete(url)
        assert (r.status_code, r.json()) == (404, missing)
    async with http_client(app, issuer.token("root", rights=[ADMIN_RIGHT])) as admin:
        assert (await admin.get(url)).status_code == 200


@pytest.mark.slow
async def test_load_ndjson_with_methods(alice_data: httpx.AsyncClient, db_env, tmp_path: Path):
    collection = unique("test_conv-loaded_")
    path = tmp_path / "data.ndjson"
    lines = [make_collection(collection)] + [_item_doc(collection, f"n{n}") for n in range(5)]
    path.write_text("\n".join(json.dumps(doc) for doc in lines))

    out = run_cli("load", str(path), "--owner", "alice", env=db_env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(f"loaded 1 collection and 5 items from {path}")
    page = (await alice_data.get(f"/data/collections/{collection}/items?limit=100")).json()
    assert sorted(f["id"] for f in page["features"]) == [f"n{n}" for n in range(5)]
    assert {f["properties"]["owner"] for f in page["features"]} == {"alice"}

    out = run_cli("load", str(path), env=db_env)  # insert of what exists: one line
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f"{path}: collection {collection!r} exists already: load with --method upsert to "
        "replace, or --method ignore to keep what is stored")
    items_only = tmp_path / "items.ndjson"
    items_only.write_text("\n".join(json.dumps(doc) for doc in lines[1:]))
    out = run_cli("load", str(items_only), env=db_env)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f"{items_only}: item 'n0' is already in the collection {collection!r} (and 4 more): "
        "load with --method upsert to replace, or --method ignore to keep what is stored")
    changed = [_item_doc(collection, "n0")]
    changed[0]["properties"]["title"] = "changed"
    path.write_text(json.dumps(changed[0]))
    out = run_cli("load", str(path), "--method", "ignore", env=db_env)
    assert (out.returncode, out.stdout.splitlines()[-1]) == (0, (
        f"loaded 0 collections and 1 item from {path}, those already stored kept as they "
        "were")), out.stderr
    got = (await alice_data.get(f"/data/collections/{collection}/items/n0")).json()
    assert "title" not in got["properties"]
    assert run_cli("load", str(path), "--method", "upsert", env=db_env).returncode == 0
    got = (await alice_data.get(f"/data/collections/{collection}/items/n0")).json()
    assert got["properties"]["title"] == "changed"


def test_load_refuses_an_id_twice_in_its_file(db_env, tmp_path: Path) -> None:
    """It failed half way, a database error naming a partition; `--method upsert`, which
    that message advised, failed too ("cannot affect row a second time")."""
    collection = unique("test_conv-twice_")
    path = tmp_path / "twice.ndjson"
    lines = [make_collection(collection), _item_doc(collection, "t0"),
             _item_doc(collection, "t1"), _item_doc(collection, "t0")]
    path.write_text("\n".join(json.dumps(doc) for doc in lines))
    for method in ("insert", "upsert", "ignore"):
        out = run_cli("load", str(path), "--method", method, env=db_env)
        assert (out.returncode, out.stderr.strip()) == (1, (
            f"{path}: item 't0' of the collection {collection!r} is in the file twice: keep "
            "one; nothing was loaded")), method
    path.write_text("\n".join(json.dumps(doc) for doc in [lines[0], *lines]))
    out = run_cli("load", str(path), env=db_env)
    assert (out.returncode, out.stderr.strip()) == (1, (
        f"{path}: collection {collection!r} is in the file twice (and 1 more): keep one; "
        "nothing was loaded"))


async def test_load_static_catalog_folder(alice_data: httpx.AsyncClient, db_env, tmp_path: Path):
    collection_id = unique("test_conv-static_")
    catalog = pystac.Catalog("root", "a static catalog")
    collection = pystac.Collection.from_dict(make_collection(collection_id))
    catalog.add_child(collection)
    for n in range(3):
        collection.add_item(pystac.Item.from_dict(_item_doc(collection_id, f"s{n}")))
    catalog.normalize_and_save(str(tmp_path / "stac"), pystac.CatalogType.SELF_CONTAINED)

    out = run_cli("load", str(tmp_path / "stac"), env=db_env)
    assert out.returncode == 0, out.stderr
    page = (await alice_data.get(f"/data/collections/{collection_id}/items")).json()
    assert sorted(f["id"] for f in page["features"]) == ["s0", "s1", "s2"]


@pytest.mark.slow
def test_load_reports_bad_input(db_env, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"type": "Feature", "id": "orphan"}')
    out = run_cli("load", str(path), env=db_env)
    assert (out.returncode, out.stderr.strip()) == (
        1, f"{path}: item 'orphan' names no collection")
    out = run_cli("load", str(tmp_path / "missing.json"), env=db_env)
    assert (out.returncode, out.stderr.strip()) == (1, f"{tmp_path / 'missing.json'}: no such file")
    path.write_text(json.dumps(_item_doc("does-not-exist", "lost")))
    out = run_cli("load", str(path), env=db_env)
    assert (out.returncode, out.stderr.strip()) == (
        1, f"{path}: item 'lost' names the collection 'does-not-exist', which does not "
           "exist: load the collection first, or put it in the same file")


def test_a_collection_file_counts_collections(db_env, tmp_path: Path) -> None:
    path = tmp_path / "collection.json"
    path.write_text(json.dumps(make_collection(unique("test_conv-counted_"))))
    out = run_cli("load", str(path), env=db_env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(f"loaded 1 collection and 0 items from {path}")


@pytest.fixture
def world_readable_dir() -> Iterator[Path]:
    """A temp dir the `postgres` system user can reach (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="geocatalog-cli-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
def test_embedded_cluster_lifecycle_and_demo_data(world_readable_dir: Path) -> None:
    tmp_path = world_readable_dir
    env = {"GEOCATALOG_DATA_DIR": str(tmp_path / "data"),
           "GEOCATALOG_PG_PORT": str(free_port()), "DATABASE_URL": ""}
    status = run_cli("db", "status", env=env)
    assert (status.returncode, status.stdout.strip()) == (
        1, f"not initialised ({tmp_path / 'data' / 'pg'})")
    try:
        out = run_cli("db", "start", env=env)
        assert out.returncode == 0, out.stderr
        assert "running" in out.stdout and "127.0.0.1" in out.stdout
        out = run_cli("migrate", env=env)
        assert out.returncode == 0 and "applied geocatalog 001" in out.stdout, out.stderr
        assert out.stdout.splitlines()[-1] == (
            "database roles: geocatalog_api, geocatalog_worker, geocatalog_job (granted)")
        out = run_cli("demo-data", env=env)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().endswith(
            "loaded the demo data: 5 collections and 48 items (collections without items "
            "are not listed by /data/collections), and 1 open proposal")
        for name in ("pg", "pg.geocatalog_api", "pg.geocatalog_worker", "pg.geocatalog_job"):
            password = tmp_path / "data" / f"{name}.password"
            assert oct(password.stat().st_mode)[-3:] == "600"
        assert run_cli("db", "status", env=env).returncode == 0
    finally:
        out = run_cli("db", "stop", env=env)
    assert "stopped" in out.stdout
    assert run_cli("db", "status", env=env).returncode == 1


@pytest.mark.slow
def test_load_with_workers_loads_every_item_once_and_reports_in_file_order(
        db_env, database_url: str, tmp_path: Path) -> None:
    """More items than one check task and one loader's share: the checks and the loads run
    in processes; the first refusal named is the first in the file, and a fixed file loads
    every item into its collection and the search index."""
    prefix = unique("test_conv-workers_")
    sizes = [6_000, 3_000, 2_000, 500, 500, 200, 1]  # uneven, as variables are
    docs: list[dict] = [make_collection(f"{prefix}{n}") for n in range(len(sizes))]
    for n, size in enumerate(sizes):
        docs += [_item_doc(f"{prefix}{n}", f"i{k}") for k in range(size)]
    late, later = docs[-2], docs[11_000]
    late["geometry"] = {"type": "Point", "coordinates": [0, 91]}
    later["assets"]["data"]["href"] = "data:text/html,x"
    path = tmp_path / "many.ndjson"
    path.write_text("\n".join(json.dumps(doc) for doc in docs))
    out = run_cli("load", str(path), "--workers", "2", env=db_env)
    assert (out.returncode, out.stderr.strip()) == (1, (
        f"{path}: Item {later['id']!r}: assets.data.href: a `data:` address is not allowed "
        "(http(s), object storage such as s3://, or a relative address) (and 1 more): fix "
        "the file; nothing was loaded"))

    late["geometry"] = later["geometry"]
    later["assets"]["data"]["href"] = "s3://bucket/key.nc"
    path.write_text("\n".join(json.dumps(doc) for doc in docs))
    out = run_cli("load", str(path), "--workers", "2", env=db_env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(
        f"loaded {len(sizes)} collections and {sum(sizes)} items from {path}")
    with psycopg.connect(database_url) as conn:
        counted = [conn.execute(
            f"SELECT collection, count(*) FROM {table} WHERE collection LIKE %s "
            "GROUP BY 1 ORDER BY 1", (prefix + "%",)).fetchall()
            for table in ("pgstac.items", "geocatalog.search_items")]
    expected = sorted((f"{prefix}{n}", size) for n, size in enumerate(sizes))
    assert counted == [expected, expected]
    out = run_cli("load", str(path), "--workers", "3", env=db_env)
    assert (out.returncode, out.stderr.strip()) == (1, (
        f"{path}: collection '{prefix}0' exists already (and 6 more): load with --method "
        "upsert to replace, or --method ignore to keep what is stored"))


@pytest.mark.slow
def test_a_port_in_use_is_named_and_the_data_dir_remembers_its_port(
        world_readable_dir: Path) -> None:
    """Another checkout's database on the port asked for: one line saying so and what to
    set; once started on another port, every later command of that data dir finds the
    cluster there without being told; a port not asked for and taken: a free one."""
    data = world_readable_dir / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        out = run_cli("db", "start", env={"GEOCATALOG_DATA_DIR": str(data),
                                          "GEOCATALOG_PG_PORT": str(busy), "DATABASE_URL": ""})
    assert (out.returncode, out.stderr.strip()) == (1, (
        f"port {busy} on 127.0.0.1 is in use (another PostgreSQL, perhaps another checkout's "
        "embedded database): set GEOCATALOG_PG_PORT to a free port; the data dir remembers "
        "it for every later command"))
    port = free_port()
    env = {"GEOCATALOG_DATA_DIR": str(data), "DATABASE_URL": ""}
    try:
        assert run_cli("db", "start", env={**env, "GEOCATALOG_PG_PORT": str(port)}
                       ).returncode == 0
        status = run_cli("db", "status", env=env)  # no port given: the remembered one
        assert (status.returncode, status.stdout.strip()) == (
            0, f"running: {(data / 'pg').resolve()} on 127.0.0.1:{port}")
        migrated = run_cli("migrate", env=env)
        assert migrated.returncode == 0, migrated.stderr
    finally:
        run_cli("db", "stop", env=env)
    # not asked for a port, and its port taken meanwhile: it starts on a free one, says so,
    # and the data dir remembers that one (`make run` on a machine where 5439 is taken)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        (data / "pg.port").write_text(f"{busy}\n")
        try:
            out = run_cli("db", "start", env=env)
            moved = int((data / "pg.port").read_text())
            assert out.returncode == 0, out.stderr
            assert moved != busy
            assert out.stderr.strip() == (
                f"port {busy} is in use (another PostgreSQL, perhaps another checkout's "
                f"embedded database): the embedded database starts on port {moved}, which "
                f"{data / 'pg.port'} remembers (GEOCATALOG_PG_PORT chooses another)")
            status = run_cli("db", "status", env=env)
            assert status.stdout.strip() == f"running: {(data / 'pg').resolve()} on " \
                                            f"127.0.0.1:{moved}"
        finally:
            run_cli("db", "stop", env=env)


@pytest.mark.slow
def test_two_checkouts_started_at_once_each_find_a_port(world_readable_dir: Path) -> None:
    """Two `make run`s at the same moment saw the same port free; the one whose server
    came second stopped ("port ... is in use"). Now it starts on another free port, says
    so, and its data dir remembers it."""
    port = free_port()
    envs = []
    for name in ("one", "two"):
        data = world_readable_dir / name
        data.mkdir()
        (data / "pg.port").write_text(f"{port}\n")  # both remember the same free port
        envs.append({"GEOCATALOG_DATA_DIR": str(data), "DATABASE_URL": ""})
    try:
        started = [start_cli("db", "start", env=env) for env in envs]
        outs = [process.communicate(timeout=300) for process in started]
        assert [process.returncode for process in started] == [0, 0], outs
        ports = sorted(int(Path(env["GEOCATALOG_DATA_DIR"], "pg.port").read_text())
                       for env in envs)
        assert port in ports and len(set(ports)) == 2
        moved = max(ports, key=lambda p: p != port)
        said = [err.strip() for _, err in outs if err.strip()]
        assert len(said) == 1 and said[0].startswith(f"port {port} is in use") \
            and f"starts on port {moved}," in said[0], said
    finally:
        for env in envs:
            run_cli("db", "stop", env=env)


def test_a_refused_connection_is_one_line_naming_the_database(database_url: str,
                                                              tmp_path: Path) -> None:
    url = urlsplit(database_url)
    wrong = url._replace(netloc=f"{url.username}:not-the-password@{url.hostname}:{url.port}")
    path = tmp_path / "c.json"
    path.write_text(json.dumps(make_collection(unique("test_conv-refused_"))))
    out = run_cli("load", str(path), env={"DATABASE_URL": urlunsplit(wrong)})
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f"cannot use the database {url.hostname}:{url.port}{url.path} as {url.username}: "
        f"password authentication failed for user \"{url.username}\"")


@pytest.mark.unit
def test_the_help_reads_like_a_tools() -> None:
    """Commands in one short line each, flags without a type, values named, sentences
    whole."""
    out = run_cli("--help", env={"COLUMNS": "80"})
    assert out.returncode == 0, out.stderr
    commands = out.stdout.split("Commands:\n", 1)[1]
    assert commands.splitlines() == [
        "  migrate     Apply the database's migrations.",
        "  load        Load collections and items in bulk, through pypgstac's loader.",
        "  demo-data   Load the demo data set kept in the repository.",
        "  token       Print a token of the local development issuer.",
        "  worker      Run jobs from the queue.",
        "  demo-s3     Serve demo files from a local S3 server (moto).",
        "  thumbnails  Add quicklooks to the items that have none.",
        "  serve       Serve the APIs and the web pages.",
        "  ha-demo     Serve on a Patroni cluster of three members on loopback.",
        "  db          The embedded PostgreSQL cluster (when DATABASE_URL is unset).",
        "  images      Container images of deployed processes (podman, this host).",
        "  results     The service's results store (RESULTS_STORE).",
        "  vocabulary  The standard names collections are checked against."]
    out = run_cli("worker", "--help", env={"COLUMNS": "80"})
    assert out.stdout.split("\n\n", 1)[1] == (
        "  Run jobs from the queue. Any number of workers, on any machines, share one\n"
        "  database.\n\n"
        "Options:\n"
        "  --concurrency N  jobs run at once  [default: 2]\n"
        "  --name NAME      worker name (for logs)\n"
        "  --wait SECONDS   how long to wait for the database to be migrated before\n"
        "                   giving up  [default: 60]\n"
        "  --help           Show this message and exit.\n")
    for command in ("load", "token", "serve", "demo-s3", "ha-demo", "db", "images",
                    "results", "vocabulary"):
        out = run_cli(command, "--help", env={"COLUMNS": "80"})
        assert out.returncode == 0 and "<bool>" not in out.stdout, out.stdout
