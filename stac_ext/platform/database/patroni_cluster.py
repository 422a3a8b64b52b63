"""A Patroni cluster on loopback: one etcd and three PostgreSQL members, each managed by its
own Patroni, for `make ha-demo` and the failover drills of the tests.

Each member stands for a machine (`machines`): its Patroni, run as the `postgres` user, and
its PostgreSQL, started by Patroni in a session of its own, so that `kill_machine` kills
them all at once as a lost machine would. WAL is archived with pgBackRest into the
cluster's own repository (`pgbackrest`: `backup`, `restore`). On real machines an operator
runs Patroni, etcd and pgBackRest as the operators' High availability page says; the
settings here are the same, with a short TTL.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.request import Request, urlopen

from stac_ext.platform.database import pgbackrest
from stac_ext.platform.database.cluster import (
    DATABASE,
    SUPERUSER,
    Cluster,
    ClusterError,
    find_bindir,
)
from stac_ext.platform.database.machines import (
    alive,
    check_reachable,
    free_ports,
    get_json,
    killed_with_its_group,
    owned_by_server_user,
    read_pid,
    signalled,
    until,
)
from stac_ext.platform.database.patroni_members import Member, Timing
from stac_ext.platform.database.roles import PARTS
from stac_ext.platform.service.keyfiles import write_once

SCOPE = "geocatalog"
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
        chosen = dict(zip(names, free_ports(len(names)), strict=True))
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
        check_reachable(self.root)
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
        until(lambda: get_json(f"{client}/version") is not None, 30, "etcd did not start")

    def start_member(self, member: Member, fresh: bool = False) -> None:
        """Start a member's machine (`fresh`: from an empty folder, as a replaced machine
        starts: Patroni clones it from the leader)."""
        if fresh:
            shutil.rmtree(member.data_dir, ignore_errors=True)
        member.folder.mkdir(parents=True, exist_ok=True)
        owned_by_server_user(member.folder)
        member.folder.chmod(0o700)
        member.config.write_text(json.dumps(self._config(member), indent=1))
        member.backrest_config.write_text(pgbackrest.configuration(member, self.root))
        for path in (member.config, member.backrest_config):
            owned_by_server_user(path)
            path.chmod(0o600)
        member.pid_file.unlink(missing_ok=True)
        with member.log.open("ab") as log:
            subprocess.Popen(  # the machine: it ends once its Patroni and PostgreSQL have
                [sys.executable, "-c", "from stac_ext.platform.database.machines import "
                 f"machine; machine({str(member.config)!r}, {str(member.pid_file)!r})"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        until(lambda: member.patroni_pid() is not None, 30, f"{member.name}: no Patroni")

    def stop(self) -> None:
        """Stop every member (Patroni stops its PostgreSQL) and etcd, by their PIDs; what
        has not ended after a while is killed."""
        for member in self.members:
            if (pid := member.patroni_pid()) is not None:
                signalled(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        for member in self.members:
            while time.monotonic() < deadline and (
                    alive(member.patroni_pid()) or member.postmaster_pid() is not None):
                time.sleep(0.2)
            self.kill_machine(member)
        etcd_pid = self._etcd.pid if self._etcd is not None else read_pid(
            self.root / "etcd.pid")
        if etcd_pid is not None:
            signalled(etcd_pid, signal.SIGTERM)
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
            signalled(patroni, signal.SIGKILL)
        if postmaster is not None:  # its session's group: the postmaster and its children
            killed_with_its_group(postmaster)
        until(lambda: not alive(patroni) and member.postmaster_pid() is None, 30,
              f"{member.name}: still running after kill -9")

    def kill_postmaster(self, member: Member) -> int:
        """`kill -9` of the member's postmaster alone (its backends end by themselves and
        Patroni starts it again): the pid killed."""
        pid = member.postmaster_pid()
        if pid is None:
            raise ClusterError(f"{member.name}: PostgreSQL does not run")
        signalled(pid, signal.SIGKILL)
        return pid

    # -- what Patroni says --------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Patroni's view of the cluster (`GET /cluster` of any member that answers)."""
        for member in self.members:
            if (answer := get_json(f"{member.rest}/cluster")) is not None:
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
        answer = get_json(f"{leader.rest}/history") if leader else None
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
        until(lambda: self.healthy(members), seconds,
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
        return pgbackrest.run(member, *command)

    def backup(self) -> str:
        """A full backup from the leader."""
        leader = self.leader()
        if leader is None:
            raise ClusterError("no leader to back up")
        return pgbackrest.run(leader, "--type=full", "backup")

    def restore(self, folder: Path, target_time: str, port: int) -> Cluster:
        """The cluster as it was at `target_time`, restored from its backups into a server
        of its own (`pgbackrest.restore`)."""
        return pgbackrest.restore(self.members[0], folder, target_time, port,
                                  self._password(SUPERUSER))

    def end_of_wal(self, member: Member, timeline: int, start: int) -> int:
        """Where `member`'s WAL ends on `timeline` past `start` (`pgbackrest.end_of_wal`)."""
        return pgbackrest.end_of_wal(member, timeline, start)

    # -- configuration files ------------------------------------------------------------

    def _config(self, member: Member) -> dict[str, Any]:
        """Patroni's configuration of `member` (JSON, which Patroni reads as YAML)."""
        timing = self.timing
        archive = pgbackrest.archive_command(member)
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
