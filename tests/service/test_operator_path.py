"""What an operator meets first, without Docker: the compose file names only what exists,
its commands run in its order against a fresh database (a worker that starts early waits),
configuration mistakes are one line, the development issuer is where it is served, and the
built packages hold every data file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pypgstac
import pytest
import yaml

from stac_ext.cli import app as cli_app
from stac_ext.platform.database import roles
from stac_ext.platform.database.cluster import find_bindir
from stac_ext.settings import Settings
from tests.support.cli import run_cli, start_cli
from tests.support.cluster import new_database
from tests.support.http import free_port, wait_until_ok
from tests.support.paths import ROOT
from tests.support.roles import role_settings

pytestmark = pytest.mark.slow

COMPOSE = ROOT / "docker" / "compose.yml"
KEY = "q2Yw8b0m1Qw0mJm7c8pQk4Q0v3dE2T7b3Zq0n6wX9aY="  # 32 bytes, base64url


@pytest.fixture
def fresh_database(database_url: str) -> str:
    """A new, empty database in the test cluster: what compose's `database` starts with."""
    return new_database(database_url, "fresh_")


def test_compose_names_only_what_exists() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    assert services["database"]["image"] == f"ghcr.io/stac-utils/pgstac:v{pypgstac.__version__}"
    commands = {c.name or c.callback.__name__ for c in cli_app.registered_commands}
    fields = {name.upper() for name in Settings.model_fields}
    for name in ("migrate", "api", "worker"):
        service = services[name]
        assert service["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
        program, command, *options = service["command"]
        assert program == "geocatalog" and command in commands
        help_text = run_cli(command, "--help", env={}).stdout
        assert all(o in help_text for o in options if o.startswith("--")), options
        assert set(service["environment"]) <= fields, set(service["environment"]) - fields
    # migrations are one step the others wait for; the API is checked for readiness
    assert services["migrate"]["depends_on"] == {"database": {"condition": "service_healthy"}}
    for name in ("api", "worker"):
        assert services[name]["depends_on"] == {
            "migrate": {"condition": "service_completed_successfully"}}
        assert services[name]["restart"] == "on-failure"
    assert "/healthz" in " ".join(services["api"]["healthcheck"]["test"])
    assert services["api"]["environment"]["JOB_SECRETS_KEY"].startswith("${JOB_SECRETS_KEY:?")
    # least privilege: the owner's URL only where migrations run; each part its own role
    users = {(name, variable): urlsplit(value).username
             for name in ("migrate", "api", "worker")
             for variable, value in services[name]["environment"].items()
             if variable.endswith("DATABASE_URL")}
    assert users == {("migrate", "DATABASE_URL"): "geocatalog",
                     ("api", "DATABASE_URL"): roles.API,
                     ("worker", "DATABASE_URL"): roles.WORKER,
                     ("worker", "JOB_DATABASE_URL"): roles.JOB}
    assert services["api"]["environment"]["MIGRATE_ON_START"] == "false"
    for volume in services["database"]["volumes"][1:]:
        assert (COMPOSE.parent / volume.split(":")[0]).exists(), volume
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    for line in dockerfile.splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            assert all((ROOT / source).exists() for source in line.split()[1:-1]), line
    # the image builds the STAC Browser, Swagger UI and ECharts the Makefile builds
    makefile = (ROOT / "Makefile").read_text()
    for setting in ("STAC_BROWSER", "OL_STAC", "SWAGGER_UI", "ECHARTS"):
        made = re.search(rf"^{setting}\s*:=\s*(\S+)$", makefile, re.M)
        built = re.search(rf"^ARG {setting}=(\S+)$", dockerfile, re.M)
        assert made and built and made.group(1) == built.group(1), setting
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", ".data", ".git", "tests"} <= set(ignored)


def test_compose_order_runs_outside_docker(fresh_database: str, settings, issuer,
                                           tmp_path: Path) -> None:
    """database up (with the parts' roles) -> (a worker starting too early waits) ->
    migrate as the owner -> api and workers, each as its own role."""
    env = {"DATABASE_URL": fresh_database, "JOB_SECRETS_KEY": KEY,
           "OIDC_ISSUER": issuer.url, "GEOCATALOG_DATA_DIR": str(tmp_path),
           "IN_PROCESS_WORKER": "false", "LOAD_DEMO_DATA": "false"}
    init_roles(fresh_database)
    parts = {name: url or fresh_database for name, url in role_settings(fresh_database).items()}
    worker_env = {**env, "DATABASE_URL": parts["worker_database_url"],
                  "JOB_DATABASE_URL": parts["job_database_url"]}
    api_env = {**env, "DATABASE_URL": parts["api_database_url"], "MIGRATE_ON_START": "false"}
    early = start_cli("worker", "--wait", "120", env=worker_env)
    port = free_port()
    api = None
    try:
        time.sleep(2)
        assert early.poll() is None  # waiting, not dead
        migrated = run_cli("migrate", env=env)
        assert migrated.returncode == 0, migrated.stderr
        api = start_cli("serve", "--port", str(port), env=api_env)
        base = f"http://127.0.0.1:{port}"
        ready = wait_until_ok(f"{base}/healthz")
        assert ready.json()["status"] == "UP"
        token = issuer.token("ops", client="geocatalog-processes")
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as c:
            job = c.post("/processes/processes/echo/execution",
                         json={"processInputs": {"message": "from the early worker"}})
            assert job.status_code == 201, job.text
            status = _wait_job(c, job.headers["Location"])
            assert status == "successful"
            assert c.get(f"{job.headers['Location']}/results").json()["message"] == \
                "from the early worker"
    finally:
        for process in (early, api):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
    waited = early.stderr.read() if early.stderr else ""
    assert "waiting: the database is not migrated yet" in waited, waited


def init_roles(database_url: str) -> None:
    """Run compose's database init script against `database_url` (the test cluster made
    the roles already: it must leave them as they are)."""
    url = urlsplit(database_url)
    environ = {**os.environ, "PGHOST": url.hostname or "", "PGPORT": str(url.port),
               "PGUSER": url.username or "", "PGPASSWORD": url.password or "",
               "PGDATABASE": url.path.lstrip("/"), "GEOCATALOG_API_PASSWORD": "a",
               "GEOCATALOG_WORKER_PASSWORD": "w", "GEOCATALOG_JOB_PASSWORD": "j",
               "PATH": f"{find_bindir()}:{os.environ['PATH']}"}
    out = subprocess.run(["sh", str(COMPOSE.parent / "initdb" / "50-geocatalog-roles.sh")],
                         env=environ, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


def _wait_job(client: httpx.Client, url: str) -> str:
    deadline = time.monotonic() + 60
    while True:
        status = client.get(url).json()["status"]
        if status in ("successful", "failed") or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def test_a_worker_on_an_unmigrated_database_exits_in_one_line(fresh_database: str,
                                                              tmp_path: Path) -> None:
    env = {"DATABASE_URL": fresh_database, "JOB_SECRETS_KEY": KEY,
           "GEOCATALOG_DATA_DIR": str(tmp_path)}
    out = run_cli("worker", "--wait", "1", env=env)
    assert out.returncode == 3
    assert out.stderr.splitlines()[-1] == (
        "the database is not migrated yet (pending: pgstac, procrastinate, catalogs, "
        "geocatalog, governance, processes, sessions, subscriptions): run `geocatalog "
        "migrate` first.")
    assert len(out.stderr.splitlines()) == 2  # the wait, the verdict: no traceback


def test_a_placeholder_secrets_key_is_one_line(tmp_path: Path) -> None:
    env = {"DATABASE_URL": "postgresql://u@127.0.0.1:1/d", "GEOCATALOG_DATA_DIR": str(tmp_path),
           "JOB_SECRETS_KEY": "change-me-to-32-random-bytes-base64url-aaaaaa"}
    out = run_cli("worker", env=env)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        "JOB_SECRETS_KEY: must be 32 random bytes, base64url-encoded; make one with: "
        "python3 -c 'import base64, secrets; "
        "print(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())'"]
    assert "change-me" not in out.stderr


def test_token_does_not_make_a_key_elsewhere(tmp_path: Path) -> None:
    env = {"GEOCATALOG_DATA_DIR": str(tmp_path / "elsewhere"), "OIDC_ISSUER": "",
           "JWKS_URL": ""}
    out = run_cli("token", "alice", env=env)
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"No development issuer key at {tmp_path / 'elsewhere' / 'issuer-key.json'}: run "
        "this where the server runs, or set GEOCATALOG_DATA_DIR to the server's data dir."]
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize(("args", "said"), [
    (("alice", "--ttl", "0"),
     "Error: Invalid value for '--ttl': Input should be greater than or equal to 1"),
    (("",), "Error: Invalid value for USER: a user name, which the token names")])
def test_token_refuses_a_token_no_server_takes(tmp_path: Path, args: tuple[str, ...],
                                                said: str) -> None:
    """An expired token (`--ttl 0`, `-5`), or one naming no user, was printed, exit 0."""
    out = run_cli("token", *args, env={"GEOCATALOG_DATA_DIR": str(tmp_path),
                                       "OIDC_ISSUER": "", "JWKS_URL": ""})
    assert (out.returncode, out.stdout, out.stderr.strip().splitlines()[-1]) == (2, "", said)


def test_the_development_issuer_is_where_it_is_served(fresh_database: str,
                                                      tmp_path: Path) -> None:
    port = free_port()
    env = {"DATABASE_URL": fresh_database, "GEOCATALOG_DATA_DIR": str(tmp_path),
           "OIDC_ISSUER": "", "JWKS_URL": "", "LOAD_DEMO_DATA": "false",
           "IN_PROCESS_WORKER": "false"}
    server = start_cli("serve", "--port", str(port), env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        assert wait_until_ok(f"{base}/healthz").status_code == 200
        discovery = httpx.get(f"{base}/auth/.well-known/openid-configuration").json()
        assert discovery["issuer"] == f"{base}/auth"
        assert discovery["jwks_uri"] == f"{base}/auth/jwks"
        # a catalog holding no collection yet has its queryables (it was a 404 "Collection
        # None not found")
        r = httpx.get(f"{base}/data/queryables")
        assert (r.status_code, sorted(r.json()["properties"])) == (200, [
            "created", "datetime", "description", "geometry", "id", "owner", "title",
            "updated"]), r.text
        token = run_cli("token", "alice", env=env)  # no --port: it asks what the server runs
        assert token.returncode == 0, token.stderr
        r = httpx.post(f"{base}/data/catalogs", headers={
            "Authorization": f"Bearer {token.stdout.strip()}"},
            json={"id": "issued", "type": "Catalog", "description": "by the served issuer"})
        assert r.status_code == 201, r.text
        # the web client's token serves both APIs, as a sign-in's (it served neither)
        web = run_cli("token", "alice", "--client", "geocatalog-web", env=env)
        assert web.returncode == 0, web.stderr
        bearer = {"Authorization": f"Bearer {web.stdout.strip()}"}
        assert (httpx.get(f"{base}/processes/jobs", headers=bearer).status_code,
                httpx.post(f"{base}/data/catalogs", headers=bearer, json={
                    "id": "web", "type": "Catalog", "description": "by the web client"}
                ).status_code) == (200, 201)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_packages_hold_every_data_file(tmp_path: Path) -> None:
    """The wheel and the sdist carry the SQL migrations, demo data, extension schemas and
    the web face's templates, scripts and styles."""
    out = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir",
                          str(tmp_path), str(ROOT)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    data = sorted(str(p.relative_to(ROOT)) for package in ("stac_ext", "catalogs_ext",
                                                           "process_api")
                  for p in (ROOT / package).rglob("*")
                  if p.suffix in (".sql", ".json", ".ndjson", ".html", ".js", ".css")
                  and "__pycache__" not in p.parts)
    assert len(data) >= 8
    [wheel] = tmp_path.glob("*.whl")
    [sdist] = tmp_path.glob("*.tar.gz")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert [f for f in data if f not in in_wheel] == []
    assert [f for f in data if f not in in_sdist] == []


def test_make_run_takes_host_and_port() -> None:
    out = subprocess.run(["make", "-n", "run", "HOST=0.0.0.0", "PORT=8081"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert ("OUTBOUND_ALLOW=127.0.0.0/8 .venv/bin/geocatalog serve --host 0.0.0.0 --port 8081"
            in out.stdout.splitlines())
