"""The embedded PostgreSQL cluster: initdb / pg_ctl on the system binaries, in a data dir.

Used when `DATABASE_URL` is unset (`make run`, tests). Listens on 127.0.0.1 only, with
password authentication; the generated passwords are kept beside the cluster (mode 0600):
the superuser's (migrations, bulk loads) and one per part's role (`roles.py`), whose
rights the migrations grant.
When run as root, the server runs as the `postgres` system user, as PostgreSQL requires.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from stac_ext.platform.database.roles import PARTS
from stac_ext.platform.service.keyfiles import write_once

SUPERUSER = "geocatalog"
DATABASE = "geocatalog"


class ClusterError(RuntimeError):
    """The embedded cluster cannot be set up; the message says what to do."""


def find_bindir() -> Path:
    """The newest PostgreSQL server binaries installed by Debian's packages (or on PATH)."""
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if candidates:
        return candidates[-1].parent
    if found := shutil.which("initdb"):
        return Path(found).parent
    raise ClusterError(
        "PostgreSQL server binaries not found: install them with "
        "`apt-get install postgresql postgresql-15-postgis-3` (or run `make run` as root)."
    )


#: What the embedded cluster changes from PostgreSQL's defaults (everything else is as
#: PostgreSQL ships it, which the scale tests and benchmarks rely on: see `settings`).
SERVER_SETTINGS = {"max_connections": "200", "shared_buffers": "256MB"}


@dataclass(frozen=True)
class Cluster:
    """A local PostgreSQL cluster in `datadir`, listening on 127.0.0.1:`port`; `settings`
    (PostgreSQL's, as `-c name=value`) default to SERVER_SETTINGS; `{}` keeps every
    PostgreSQL default."""

    datadir: Path
    port: int
    settings: Mapping[str, str] = field(default_factory=lambda: dict(SERVER_SETTINGS))

    @property
    def password_file(self) -> Path:
        return self.datadir.parent / f"{self.datadir.name}.password"

    @property
    def log_file(self) -> Path:
        return self.datadir / "server.log"

    @property
    def password(self) -> str:
        return self.password_file.read_text().strip()

    @property
    def dsn(self) -> str:
        return f"postgresql://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{DATABASE}"

    @property
    def port_file(self) -> Path:
        """The port the cluster was last started on: every command using the same data
        dir finds it there (another checkout's cluster may hold the default port)."""
        return self.datadir.parent / f"{self.datadir.name}.port"

    def remembered_port(self) -> int | None:
        try:
            return int(self.port_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def role_password_file(self, role: str) -> Path:
        return self.datadir.parent / f"{self.datadir.name}.{role}.password"

    def role_dsn(self, role: str, database: str = DATABASE) -> str:
        """The URL of a part's login role (made by `start`)."""
        password = self.role_password_file(role).read_text().strip()
        return f"postgresql://{role}:{password}@127.0.0.1:{self.port}/{database}"

    @property
    def initialized(self) -> bool:
        return (self.datadir / "PG_VERSION").exists() and self.password_file.exists()

    def _run(self, *args: str | Path, check: bool = True,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run a server binary, as `postgres` when we are root (initdb refuses root)."""
        cmd = [str(find_bindir() / str(args[0])), *map(str, args[1:])]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False,
                                env={**os.environ, **(env or {})})
        if check and result.returncode != 0:
            raise ClusterError(f"{args[0]} failed: {result.stderr.strip() or result.stdout}")
        return result

    def _chown_to_server_user(self, path: Path) -> None:
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(path, user.pw_uid, user.pw_gid)

    def _check_server_user_can_reach(self) -> None:
        if os.geteuid() != 0:
            return
        probe = subprocess.run(["runuser", "-u", "postgres", "--", "test", "-x",
                                str(self.datadir.parent)], check=False)
        if probe.returncode != 0:
            raise ClusterError(
                f"the postgres user cannot reach {self.datadir.parent}: choose a data dir "
                "whose parent folders are world-executable (GEOCATALOG_DATA_DIR)."
            )

    def init(self) -> None:
        """Create the cluster with a fresh superuser password (no-op when it exists)."""
        if self.initialized:
            return
        self.datadir.mkdir(parents=True, exist_ok=True)
        self._check_server_user_can_reach()
        self.datadir.chmod(0o700)
        self._chown_to_server_user(self.datadir)
        password = secrets.token_urlsafe(24)
        pwfile = self.datadir.parent / f".{self.datadir.name}.initdb-pw"
        pwfile.write_text(password)
        self._chown_to_server_user(pwfile)
        try:
            self._run(
                "initdb", "-D", self.datadir, "-U", SUPERUSER, f"--pwfile={pwfile}",
                "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8",
            )
        finally:
            pwfile.unlink(missing_ok=True)
        self.password_file.unlink(missing_ok=True)  # left by an initdb that failed
        write_once(self.password_file, password)

    def running(self) -> bool:
        return self.initialized and self._run("pg_ctl", "status", "-D", self.datadir,
                                              check=False).returncode == 0

    def start(self) -> None:
        """Init if needed, start if stopped, and make sure the database and the parts'
        roles exist."""
        self.init()
        self.start_server()
        self._ensure_database()
        self._ensure_login_roles()

    def start_server(self) -> None:
        """Start the server of the data dir if stopped (no database or role made: `start`
        makes them)."""
        if not self.running():
            if _in_use(self.port):
                raise ClusterError(
                    f"port {self.port} on 127.0.0.1 is in use (another PostgreSQL, perhaps "
                    "another checkout's embedded database): set GEOCATALOG_PG_PORT to a free "
                    "port; the data dir remembers it for every later command")
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={self.port} "
                f"-c unix_socket_directories='{self.datadir}' "
                + " ".join(f"-c {name}={value}" for name, value in self.settings.items())
            )
            try:
                self._run("pg_ctl", "start", "-w", "-t", "60", "-D", self.datadir,
                          "-l", self.log_file, "-o", options)
            except ClusterError as e:
                log = self.log_file.read_text().strip().splitlines()[-3:] \
                    if self.log_file.exists() else []
                raise ClusterError(f"{e} Server log ({self.log_file}): "
                                   + " | ".join(log)) from e
        if self.remembered_port() != self.port:
            self.port_file.write_text(f"{self.port}\n")

    def on_a_free_port(self) -> Cluster:
        """This cluster; or, when it does not run and something else holds its port (another
        checkout's embedded database), the same on a free port, which its data dir
        remembers once it has started there."""
        if not _in_use(self.port) or self.running():
            return self
        return Cluster(datadir=self.datadir, port=_free_port(), settings=self.settings)

    def start_replica(self, datadir: Path, port: int) -> Cluster:
        """A streaming replica of this (running) cluster in `datadir`, started on `port`:
        `pg_basebackup -R`, then started read-only. (Tests use it; on real servers the
        operator makes replicas.)"""
        replica = Cluster(datadir=datadir, port=port)
        datadir.mkdir(parents=True, exist_ok=True)
        datadir.chmod(0o700)
        self._chown_to_server_user(datadir)
        for source in [self.password_file, *map(self.role_password_file, PARTS)]:
            copy = datadir.parent / source.name.replace(self.datadir.name, datadir.name, 1)
            copy.unlink(missing_ok=True)
            write_once(copy, source.read_text())
        self._run("pg_basebackup", "-D", datadir, "-h", "127.0.0.1", "-p", str(self.port),
                  "-U", SUPERUSER, "-X", "stream", "-R", "-c", "fast",
                  env={"PGPASSWORD": self.password})
        replica.start_server()
        return replica

    def stop(self) -> None:
        if self.running():
            self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", self.datadir)

    def status(self) -> str:
        if not self.initialized:
            return f"not initialised ({self.datadir})"
        state = "running" if self.running() else "stopped"
        return f"{state}: {self.datadir} on 127.0.0.1:{self.port}"

    def _ensure_database(self) -> None:
        import psycopg

        admin = self.dsn.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')

    def _ensure_login_roles(self) -> None:
        """Each part's role, able to log in with its own password (rights: migrations)."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            for role in PARTS:
                write_once(self.role_password_file(role), secrets.token_urlsafe(24))
                password = self.role_password_file(role).read_text().strip()
                exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                                      (role,)).fetchone()
                verb = "ALTER" if exists else "CREATE"
                conn.execute(sql.SQL(verb + " ROLE {} LOGIN PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)))


def _free_port() -> int:
    """A port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _in_use(port: int) -> bool:
    """Whether something listens on 127.0.0.1:`port` already."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0
