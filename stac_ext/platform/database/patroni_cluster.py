"""A Patroni cluster on loopback: one etcd and three PostgreSQL members, each managed by its
own Patroni, for `make ha-demo` and the failover drills of the tests.

Each member stands for a machine: its Patroni (run as the `postgres` user when we are root,
as PostgreSQL requires) under a small process of ours that reaps what dies on it (PID 1 of
a container may not), its PostgreSQL started by Patroni in a session of its own, so that
`kill_machine` kills them all at once as a lost machine would. WAL is archived with pgBackRest
into the cluster's own repository (`backup`, `restore`). On real machines an operator runs
Patroni, etcd and pgBackRest as the operators' High availability page says; the settings
here are the same, with a short TTL.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.error import URLError
from urllib.request import Request, urlopen

from stac_ext.platform.database.cluster import (
    DATABASE,
    SUPERUSER,
    Cluster,
    ClusterError,
    find_bindir,
)
from stac_ext.platform.database.roles import PARTS
from stac_ext.platform.service.keyfiles import write_once

SCOPE = "geocatalog"
#: pgBackRest's name for the cluster's backups and WAL archive.
STANZA = "geocatalog"
REPLICATOR = "replicator"
MEMBERS = ("m1", "m2", "m3")
#: What every member runs with besides Patroni's own (the docs' example says why each).
PARAMETERS = {
    "max_connections": 200, "hot_standby_feedback": "on", "wal_log_hints": "on",
    "wal_keep_size": "256MB", "archive_mode": "on", "archive_timeout": 0,
}
#: Patroni promotes no replica further behind the primary's last known position than this
#: (its default): what asynchronous replication may lose in a failover.
MAXIMUM_LAG_ON_FAILOVER = 1024 * 1024
PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Timing:
    """Patroni's clock: the leader key lives `ttl` s unless renewed, each member acts every
    `loop_wait` s, a DCS or PostgreSQL call is retried for `retry_timeout` s. A dead
    primary's key expires within `ttl` s; then a replica is promoted."""

    ttl: int = 10
    loop_wait: int = 2
    retry_timeout: int = 4


@dataclass(frozen=True)
class Member:
    """One member: its folder (`root/name`), its PostgreSQL port and its REST API's port."""

    name: str
    folder: Path
    pg_port: int
    rest_port: int

    @property
    def data_dir(self) -> Path:
        return self.folder / "pg"

    @property
    def config(self) -> Path:
        return self.folder / "patroni.yml"

    @property
    def log(self) -> Path:
        return self.folder / "patroni.log"

    @property
    def pid_file(self) -> Path:
        """Its Patroni's pid, written by the process that runs it."""
        return self.folder / "patroni.pid"

    @property
    def backrest_config(self) -> Path:
        return self.folder / "pgbackrest.conf"

    @property
    def rest(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    def patroni_pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text())
        except (OSError, ValueError):
            return None

    def postmaster_pid(self) -> int | None:
        """Its running PostgreSQL's pid (postmaster.pid), None when it does not run."""
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if _alive(pid) else None


class PatroniCluster:
    """Three members and one etcd in `root`, on the ports `root/ports.json` remembers
    (free ones, chosen at the first start)."""

    def __init__(self, root: Path, timing: Timing = Timing(), synchronous: bool = True
                 ) -> None:
        self.root = root.resolve()
        self.timing = timing
        self.synchronous = synchronous
        ports = self._ports()
        self.etcd_port, self.etcd_peer_port = ports["etcd"], ports["etcd_peer"]
        self.members = [Member(name, self.root / name, ports[name], ports[f"{name}_rest"])
                        for name in MEMBERS]
        self._etcd: subprocess.Popen[bytes] | None = None

    # -- where it is ------------------------------------------------------------------

    def _ports(self) -> dict[str, int]:
        path = self.root / "ports.json"
        if path.exists():
            ports: dict[str, int] = json.loads(path.read_text())
            return ports
        names = ["etcd", "etcd_peer", *MEMBERS, *(f"{name}_rest" for name in MEMBERS)]
        chosen = dict(zip(names, _free_ports(len(names)), strict=True))
        self.root.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(chosen))
        return chosen

    def member(self, name: str) -> Member:
        return next(m for m in self.members if m.name == name)

    def _password(self, role: str) -> str:
        path = self.root / f"{role}.password"
        write_once(path, secrets.token_urlsafe(24))
        return path.read_text().strip()

    def url(self, role: str = SUPERUSER, database: str = DATABASE,
            target: str | None = None) -> str:
        """A URL listing every member (libpq's multi-host form) as `role`; `target`:
        libpq's `target_session_attrs` (unset: the service adds its own)."""
        hosts = ",".join(f"127.0.0.1:{m.pg_port}" for m in self.members)
        query = f"?target_session_attrs={target}" if target else ""
        return f"postgresql://{role}:{self._password(role)}@{hosts}/{database}{query}"

    def member_url(self, member: Member, role: str = SUPERUSER,
                   database: str = DATABASE) -> str:
        return (f"postgresql://{role}:{self._password(role)}@127.0.0.1:{member.pg_port}/"
                f"{database}")

    # -- starting and stopping ----------------------------------------------------------

    def start(self) -> None:
        """etcd, then every member (the first to start initialises the cluster, the others
        clone it); returns once a leader and two replicas stream (one synchronous when so
        set), with the service's database, login roles and backup stanza."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        _check_reachable(self.root)
        self._start_etcd()
        for member in self.members:
            self.start_member(member)
        self.wait_healthy()
        self._prepare()

    def _start_etcd(self) -> None:
        if self._etcd is not None and self._etcd.poll() is None:
            return
        data = self.root / "etcd"
        client = f"http://127.0.0.1:{self.etcd_port}"
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        with (self.root / "etcd.log").open("ab") as log:
            self._etcd = subprocess.Popen(
                ["etcd", "--name", "e1", "--data-dir", str(data),
                 "--listen-client-urls", client, "--advertise-client-urls", client,
                 "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                 "--initial-cluster", f"e1={peer}", "--initial-cluster-state", "new"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        (self.root / "etcd.pid").write_text(str(self._etcd.pid))
        _until(lambda: _get(f"{client}/version") is not None, 30, "etcd did not start")

    def start_member(self, member: Member, fresh: bool = False) -> None:
        """Start a member's machine (`fresh`: from an empty folder, as a replaced machine
        starts: Patroni clones it from the leader)."""
        if fresh:
            shutil.rmtree(member.data_dir, ignore_errors=True)
        member.folder.mkdir(parents=True, exist_ok=True)
        _chown_to_server_user(member.folder)
        member.folder.chmod(0o700)
        member.config.write_text(json.dumps(self._config(member), indent=1))
        member.backrest_config.write_text(self._backrest_config(member))
        for path in (member.config, member.backrest_config):
            _chown_to_server_user(path)
            path.chmod(0o600)
        member.pid_file.unlink(missing_ok=True)
        with member.log.open("ab") as log:
            subprocess.Popen(  # the machine: it ends once its Patroni and PostgreSQL have
                [sys.executable, "-c", "from stac_ext.platform.database.patroni_cluster "
                 f"import machine; machine({str(member.config)!r}, {str(member.pid_file)!r})"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        _until(lambda: member.patroni_pid() is not None, 30, f"{member.name}: no Patroni")

    def stop(self) -> None:
        """Stop every member (Patroni stops its PostgreSQL) and etcd, by their PIDs; what
        has not ended after a while is killed."""
        for member in self.members:
            if (pid := member.patroni_pid()) is not None:
                _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        for member in self.members:
            while time.monotonic() < deadline and (
                    _alive(member.patroni_pid()) or member.postmaster_pid() is not None):
                time.sleep(0.2)
            self.kill_machine(member)
        etcd_pid = self._etcd.pid if self._etcd is not None else _read_pid(
            self.root / "etcd.pid")
        if etcd_pid is not None:
            _signal(etcd_pid, signal.SIGTERM)
            if self._etcd is not None:
                try:
                    self._etcd.wait(30)
                except subprocess.TimeoutExpired:
                    self._etcd.kill()
                    self._etcd.wait()
        self._etcd = None

    # -- faults -------------------------------------------------------------------------

    def kill_machine(self, member: Member) -> None:
        """`kill -9` of the member's Patroni and of its PostgreSQL, every process of it,
        together: the machine is lost."""
        patroni, postmaster = member.patroni_pid(), member.postmaster_pid()
        if patroni is not None:
            _signal(patroni, signal.SIGKILL)
        if postmaster is not None:  # its session's group: the postmaster and its children
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(postmaster), signal.SIGKILL)
        _until(lambda: not _alive(patroni) and member.postmaster_pid() is None, 30,
               f"{member.name}: still running after kill -9")

    def kill_postmaster(self, member: Member) -> int:
        """`kill -9` of the member's postmaster alone (its backends end by themselves and
        Patroni starts it again): the pid killed."""
        pid = member.postmaster_pid()
        if pid is None:
            raise ClusterError(f"{member.name}: PostgreSQL does not run")
        _signal(pid, signal.SIGKILL)
        return pid

    # -- what Patroni says --------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Patroni's view of the cluster (`GET /cluster` of any member that answers)."""
        for member in self.members:
            if (answer := _get(f"{member.rest}/cluster")) is not None:
                state: dict[str, Any] = answer
                return state
        return {"members": []}

    def leader(self) -> Member | None:
        for entry in self.state()["members"]:
            if entry.get("role") == "leader" and entry.get("state") == "running":
                return self.member(entry["name"])
        return None

    def history(self) -> list[list[Any]]:
        """The timelines (`GET /history` of the leader): [timeline, lsn, reason, when, new
        leader] each."""
        leader = self.leader()
        answer = _get(f"{leader.rest}/history") if leader else None
        return answer if isinstance(answer, list) else []

    def healthy(self, members: int = 3) -> bool:
        """A leader and `members` - 1 replicas replaying its current timeline, one of them
        synchronous when so set."""
        entries = self.state()["members"]
        leader = next((e for e in entries if e.get("role") == "leader"
                       and e.get("state") == "running"), None)
        if leader is None:
            return False
        replicas = [e for e in entries if e.get("role") in ("replica", "sync_standby")
                    and e.get("state") in ("running", "streaming")
                    and e.get("timeline") == leader.get("timeline")
                    and isinstance(e.get("lag"), int)]
        synchronous = any(e.get("role") == "sync_standby" for e in replicas)
        return len(replicas) >= members - 1 and (synchronous or not self.synchronous)

    def wait_healthy(self, members: int = 3, seconds: float = 180) -> None:
        _until(lambda: self.healthy(members), seconds,
               f"the cluster did not become healthy: {self.state()}")

    def configure(self, **dynamic: Any) -> None:
        """Change Patroni's dynamic configuration (`PATCH /config`), e.g.
        `synchronous_mode=False`; it applies on every member within a loop."""
        leader = self.leader()
        if leader is None:
            raise ClusterError("no leader to configure")
        request = Request(f"{leader.rest}/config", data=json.dumps(dynamic).encode(),
                          method="PATCH", headers={"Content-Type": "application/json"})
        with urlopen(request, timeout=10) as answer:
            answer.read()
        if "synchronous_mode" in dynamic:
            self.synchronous = bool(dynamic["synchronous_mode"])

    # -- the service's database and backups ---------------------------------------------

    def _prepare(self) -> None:
        """The service's database and its parts' login roles (as the embedded cluster
        makes them), and pgBackRest's stanza."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(database="postgres", target="read-write"),
                             autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                (DATABASE,)).fetchone():
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
            for role in PARTS:
                verb = "ALTER" if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                                               (role,)).fetchone() else "CREATE"
                conn.execute(sql.SQL(verb + " ROLE {} LOGIN PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(self._password(role))))
        leader = self.leader()
        assert leader is not None
        self.backrest(leader, "stanza-create")

    def backrest(self, member: Member, *command: str) -> str:
        """pgBackRest with `member`'s configuration, as the server's user: its output."""
        return _run_as_server_user(["pgbackrest", f"--config={member.backrest_config}",
                                    f"--stanza={STANZA}", *command])

    def backup(self) -> str:
        """A full backup from the leader."""
        leader = self.leader()
        if leader is None:
            raise ClusterError("no leader to back up")
        return self.backrest(leader, "--type=full", "backup")

    def restore(self, folder: Path, target_time: str, port: int) -> Cluster:
        """The latest backup and the archived WAL restored into `folder/pg` up to
        `target_time` (PostgreSQL's timestamp syntax), on whatever timeline it was, started
        alone on `port` (archiving nothing, waiting for no standby) and promoted there: the
        restored server, as an embedded cluster (its owner's password beside it)."""
        restored = Cluster(datadir=folder / "pg", port=port, settings={
            "archive_mode": "off", "synchronous_standby_names": "''"})
        restored.datadir.mkdir(parents=True)
        restored.datadir.chmod(0o700)
        _chown_to_server_user(restored.datadir)
        # the latest backup by its label: pgBackRest picks one by time to the second, and
        # a moment in the second a backup ended would find none
        backups = json.loads(self.backrest(self.members[0], "--output=json", "info"))
        latest = backups[0]["backup"][-1]["label"]
        self.backrest(self.members[0], f"--pg1-path={restored.datadir}", f"--set={latest}",
                      "--type=time", f"--target={target_time}", "--target-action=promote",
                      "restore")
        write_once(restored.password_file, self._password(SUPERUSER))
        restored.start_server()
        _until(lambda: _promoted(restored.dsn), 120, "the restored server was not promoted")
        return restored

    def end_of_wal(self, member: Member, timeline: int, start: int) -> int:
        """Where `member`'s WAL ends on `timeline`, read from its data dir after `start`
        (an LSN as a number): what a primary that died had written."""
        result = subprocess.run(
            [str(find_bindir() / "pg_waldump"), f"--path={member.data_dir / 'pg_wal'}",
             f"--timeline={timeline}", f"--start={lsn_text(start)}", "--quiet"],
            capture_output=True, text=True, check=False)
        # pg_waldump reads records until the first that is not one, where the WAL ends ("at"
        # it; "after" `start` when there is none past it)
        found = re.findall(r"(?:at|after) ([0-9A-F]+/[0-9A-F]+)", result.stderr)
        if not found:
            raise ClusterError(f"pg_waldump found no end: {result.stderr.strip()}")
        return lsn_number(found[-1])

    # -- configuration files ------------------------------------------------------------

    def _config(self, member: Member) -> dict[str, Any]:
        """Patroni's configuration of `member` (JSON, which Patroni reads as YAML)."""
        timing = self.timing
        archive = (f"pgbackrest --config={member.backrest_config} --stanza={STANZA} "
                   "archive-push %p")
        return {
            "scope": SCOPE, "name": member.name,
            "restapi": {"listen": f"127.0.0.1:{member.rest_port}",
                        "connect_address": f"127.0.0.1:{member.rest_port}"},
            "etcd3": {"hosts": [f"127.0.0.1:{self.etcd_port}"]},
            "bootstrap": {
                "dcs": {"ttl": timing.ttl, "loop_wait": timing.loop_wait,
                        "retry_timeout": timing.retry_timeout,
                        "maximum_lag_on_failover": MAXIMUM_LAG_ON_FAILOVER,
                        "synchronous_mode": self.synchronous,
                        "postgresql": {"use_pg_rewind": True, "use_slots": True,
                                       "parameters": {**PARAMETERS,
                                                      "archive_command": archive}}},
                "initdb": [{"encoding": "UTF8"}, {"locale": "C.UTF-8"}, "data-checksums"],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{member.pg_port}",
                "connect_address": f"127.0.0.1:{member.pg_port}",
                "data_dir": str(member.data_dir), "bin_dir": str(find_bindir()),
                "pgpass": str(member.folder / "pgpass"),
                "authentication": {
                    "superuser": {"username": SUPERUSER, "password": self._password(SUPERUSER)},
                    "replication": {"username": REPLICATOR,
                                    "password": self._password(REPLICATOR)},
                    "rewind": {"username": SUPERUSER, "password": self._password(SUPERUSER)},
                },
                # archive_command is each member's own (its pgBackRest configuration)
                "parameters": {"unix_socket_directories": str(member.folder),
                               "archive_command": archive},
                # the socket's folder is the server user's alone (0700)
                "pg_hba": ["local all all trust",
                           f"host replication {REPLICATOR} 127.0.0.1/32 scram-sha-256",
                           "host all all 127.0.0.1/32 scram-sha-256"],
            },
        }

    def _backrest_config(self, member: Member) -> str:
        backups = self.root / "backups"
        for folder in (backups, self.root / "backrest"):
            folder.mkdir(exist_ok=True)
            _chown_to_server_user(folder)
        return (f"[global]\nrepo1-path={backups}\nrepo1-retention-full=2\n"
                f"log-path={self.root / 'backrest'}\nlock-path={self.root / 'backrest'}\n"
                "log-level-console=warn\nlog-level-file=info\nstart-fast=y\ncompress-type=lz4\n\n"
                f"[{STANZA}]\npg1-path={member.data_dir}\npg1-port={member.pg_port}\n"
                f"pg1-socket-path={member.folder}\npg1-user={SUPERUSER}\n")


def machine(config: str, pid_file: str) -> None:
    """One member's machine: its Patroni (as the server's user when we are root), and every
    process orphaned beneath it reaped, until none is left. SIGTERM and SIGINT go to
    Patroni, which stops its PostgreSQL."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    user = {}
    if os.geteuid() == 0:
        server = pwd.getpwnam("postgres")
        user = {"user": server.pw_uid, "group": server.pw_gid, "extra_groups": []}
    # Patroni is Debian's, on the system's Python: nothing of ours on its path
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("PYTHON") and name != "VIRTUAL_ENV"}
    environment["HOME"] = str(Path(config).parent)
    patroni = subprocess.Popen(["patroni", config], env=environment, **user)  # type: ignore[call-overload]
    Path(pid_file).write_text(str(patroni.pid))
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda signum, frame: _signal(patroni.pid, signum))
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def lsn_number(lsn: str) -> int:
    """PostgreSQL's `X/Y` WAL position as a number of bytes."""
    high, low = lsn.split("/")
    return (int(high, 16) << 32) + int(low, 16)


def lsn_text(lsn: int) -> str:
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def _promoted(dsn: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(dsn, connect_timeout=5) as conn:
            row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
    except psycopg.OperationalError:
        return False
    return row is not None and not row[0]


def _run_as_server_user(command: list[str]) -> str:
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ClusterError(f"{command[-1]} failed: {result.stderr.strip() or result.stdout}")
    return result.stdout


def _chown_to_server_user(path: Path) -> None:
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(path, user.pw_uid, user.pw_gid)


def _check_reachable(folder: Path) -> None:
    if os.geteuid() == 0 and subprocess.run(
            ["runuser", "-u", "postgres", "--", "test", "-x", str(folder)],
            check=False).returncode != 0:
        raise ClusterError(f"the postgres user cannot reach {folder}: choose a folder whose "
                           "parent folders are world-executable")


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _get(url: str) -> Any:
    try:
        with urlopen(url, timeout=5) as answer:
            return json.loads(answer.read())
    except (URLError, OSError, ValueError):
        return None


def _until(condition: Any, seconds: float, failure: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise ClusterError(failure)
        time.sleep(0.2)


def _alive(pid: int | None) -> bool:
    """Whether `pid` runs (a zombie does not)."""
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None

