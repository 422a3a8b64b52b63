"""The members of a Patroni cluster on loopback (`Member`: its folder, its ports, its files,
the pids of its Patroni and its PostgreSQL) and the clock they keep (`Timing`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stac_ext.platform.database.machines import alive, read_pid
from stac_ext.platform.folder_file import FolderFile


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

    # its files
    data_dir = FolderFile("folder", "pg")
    config = FolderFile("folder", "patroni.yml")
    log = FolderFile("folder", "patroni.log")
    pid_file = FolderFile("folder", "patroni.pid",
                          "Its Patroni's pid, written by the process that runs it.")
    backrest_config = FolderFile("folder", "pgbackrest.conf")

    @property
    def rest(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    def patroni_pid(self) -> int | None:
        return read_pid(self.pid_file)

    def postmaster_pid(self) -> int | None:
        """Its running PostgreSQL's pid (postmaster.pid), None when it does not run."""
        pid = read_pid(self.data_dir / "postmaster.pid")
        return pid if alive(pid) else None
