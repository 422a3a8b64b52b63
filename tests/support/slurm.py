"""A real one-node Slurm for the tests (Debian's `slurm-wlm` and `munge`): `munged` as the
munge user with a key of its own, `slurmctld` and `slurmd` as root on ports of their own,
their state, spool, logs and sockets in one folder; stopped by their PIDs, their jobs
cancelled first. Commands reach it through `SLURM_CONF` (`SlurmCluster.env`)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.http import free_port

#: The node's memory as Slurm counts it (less than the machine's: slurmd refuses more).
NODE_MEMORY_MIB = 4096
#: How long Slurm keeps an ended job (then `squeue` no longer knows it): the tests look
#: ended jobs up.
MIN_JOB_AGE = 300

CONF = """\
ClusterName=geocatalog-test
SlurmctldHost={host}
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge={min_job_age}
KillWait=5
SchedulerParameters=batch_sched_delay=0
NodeName={host} CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=main Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


@dataclass
class SlurmCluster:
    folder: Path
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """What a process needs to use this cluster's commands."""
        return {"SLURM_CONF": str(self.conf)}

    def run(self, *command: str) -> str:
        """A Slurm command's output (it must succeed)."""
        return subprocess.run(command, env={**os.environ, **self.env}, capture_output=True,
                              text=True, check=True).stdout

    def queue(self) -> dict[str, str]:
        """The jobs Slurm runs or holds: id -> state (pending and running only)."""
        lines = self.run("squeue", "-h", "-o", "%i %T").split()
        return dict(zip(lines[::2], lines[1::2], strict=True))

    def job(self, slurm_id: str) -> dict[str, str]:
        """`scontrol show job`'s fields (`TRES`, `NumCPUs`, `Account`, ...)."""
        fields: dict[str, str] = {}
        for word in self.run("scontrol", "-o", "show", "job", slurm_id).split():
            name, _, value = word.partition("=")
            fields.setdefault(name, value)
        return fields

    def stop(self) -> None:
        subprocess.run(["scancel", "--full", "--user", "root"], env={**os.environ, **self.env},
                       capture_output=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _alive(self.pids.get("slurmd")):
            try:
                if not self.queue():
                    break
            except subprocess.CalledProcessError:
                break
            time.sleep(0.2)
        for name in ("slurmd", "slurmctld", "munged"):
            pid = self.pids.get(name)
            if _alive(pid):
                assert pid is not None
                os.kill(pid, signal.SIGTERM)
                _wait_gone(pid)
        shutil.rmtree(self.folder, ignore_errors=True)


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 20
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


def _pid_of(path: Path) -> int:
    deadline = time.monotonic() + 30
    while not path.exists() or not path.read_text().strip():
        if time.monotonic() > deadline:
            raise RuntimeError(f"no pid file {path}")
        time.sleep(0.05)
    return int(path.read_text().split()[0])


def start_slurm() -> SlurmCluster:
    """A one-node cluster of this machine, its jobs able to run at once on its cores."""
    folder = Path(tempfile.mkdtemp(prefix="geocatalog-slurm-"))
    folder.chmod(0o755)
    cluster = SlurmCluster(folder)
    try:
        munge, run = folder / "munge", folder / "run"
        for path, mode in ((munge, 0o700), (run, 0o755)):
            path.mkdir(mode=mode)
            shutil.chown(path, "munge", "munge")
        for name in ("state", "spool"):
            (folder / name).mkdir()
        subprocess.run(["mungekey", "--create", f"--keyfile={munge / 'munge.key'}"],
                       check=True, capture_output=True)
        shutil.chown(munge / "munge.key", "munge", "munge")
        subprocess.run(["runuser", "-u", "munge", "--", "munged",
                        f"--socket={run / 'munge.sock'}", f"--key-file={munge / 'munge.key'}",
                        f"--pid-file={munge / 'munged.pid'}",
                        f"--log-file={munge / 'munged.log'}",
                        f"--seed-file={munge / 'munged.seed'}"], check=True)
        cluster.pids["munged"] = _pid_of(munge / "munged.pid")
        host = socket.gethostname().split(".")[0]
        cluster.conf.write_text(CONF.format(
            host=host, ctld_port=free_port(), d_port=free_port(),
            munge_socket=run / "munge.sock", folder=folder, min_job_age=MIN_JOB_AGE,
            cpus=os.cpu_count() or 1, memory=NODE_MEMORY_MIB))
        for daemon in ("slurmctld", "slurmd"):
            subprocess.run([daemon, "-f", str(cluster.conf)], check=True,
                           env={**os.environ, **cluster.env})
            cluster.pids[daemon] = _pid_of(folder / f"{daemon}.pid")
        deadline = time.monotonic() + 60
        while "idle" not in cluster.run("sinfo", "-h", "-o", "%t"):
            if time.monotonic() > deadline:
                raise RuntimeError("the test Slurm's node never became idle")
            time.sleep(0.1)
    except BaseException:
        cluster.stop()
        raise
    return cluster
