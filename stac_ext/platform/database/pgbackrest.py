"""pgBackRest for a Patroni cluster on this host: each member's configuration (one
repository for the cluster, each member archiving its WAL there while it leads), full
backups, a point-in-time restore into a server of its own, and where a dead primary's WAL
ends (what a failover left behind).

Imports psycopg and the standard library.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Protocol

from stac_ext.platform.database.cluster import SUPERUSER, Cluster, ClusterError, find_bindir
from stac_ext.platform.database.machines import (
    owned_by_server_user,
    run_as_server_user,
    until,
)
from stac_ext.platform.service.keyfiles import write_once

#: pgBackRest's name for the cluster's backups and WAL archive.
STANZA = "geocatalog"


class Member(Protocol):
    """What pgBackRest needs of a member."""

    @property
    def folder(self) -> Path: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def pg_port(self) -> int: ...
    @property
    def backrest_config(self) -> Path: ...


def archive_command(member: Member) -> str:
    return f"pgbackrest --config={member.backrest_config} --stanza={STANZA} archive-push %p"


def configuration(member: Member, root: Path) -> str:
    """`member`'s pgbackrest.conf: the repository in `root/backups`, lz4 (fast) and a fast
    checkpoint at a backup's start, its own PostgreSQL over its own socket."""
    backups, logs = root / "backups", root / "backrest"
    for folder in (backups, logs):
        folder.mkdir(exist_ok=True)
        owned_by_server_user(folder)
    return (f"[global]\nrepo1-path={backups}\nrepo1-retention-full=2\n"
            f"log-path={logs}\nlock-path={logs}\nlog-level-console=warn\n"
            "log-level-file=info\nstart-fast=y\ncompress-type=lz4\n\n"
            f"[{STANZA}]\npg1-path={member.data_dir}\npg1-port={member.pg_port}\n"
            f"pg1-socket-path={member.folder}\npg1-user={SUPERUSER}\n")


def run(member: Member, *command: str) -> str:
    """pgBackRest with `member`'s configuration, as the server's user: its output."""
    return run_as_server_user(["pgbackrest", f"--config={member.backrest_config}",
                               f"--stanza={STANZA}", *command])


def restore(member: Member, folder: Path, target_time: str, port: int,
            password: str) -> Cluster:
    """The latest backup and the archived WAL restored into `folder/pg` up to
    `target_time` (PostgreSQL's timestamp syntax), on whatever timeline it was, started
    alone on `port` (archiving nothing, waiting for no standby) and promoted there: the
    restored server, as an embedded cluster whose owner has `password`."""
    restored = Cluster(datadir=folder / "pg", port=port, settings={
        "archive_mode": "off", "synchronous_standby_names": "''"})
    restored.datadir.mkdir(parents=True)
    restored.datadir.chmod(0o700)
    owned_by_server_user(restored.datadir)
    # the latest backup by its label: pgBackRest picks one by time to the second, and a
    # moment in the second a backup ended would find none
    latest = json.loads(run(member, "--output=json", "info"))[0]["backup"][-1]["label"]
    run(member, f"--pg1-path={restored.datadir}", f"--set={latest}", "--type=time",
        f"--target={target_time}", "--target-action=promote", "restore")
    write_once(restored.password_file, password)
    restored.start_server()
    until(lambda: _promoted(restored.dsn), 120, "the restored server was not promoted")
    return restored


def end_of_wal(member: Member, timeline: int, start: int) -> int:
    """Where `member`'s WAL ends on `timeline`, read from its data dir after `start` (an
    LSN as a number): what a primary that died had written."""
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
