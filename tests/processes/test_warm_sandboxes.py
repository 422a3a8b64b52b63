"""Sandboxes started ahead for deployed processes' jobs (`JOB_WARM_SANDBOXES`): a job takes
one, sees its staged inputs there, and the sandbox serves no other job; inputs that cannot
move into it get a sandbox started for the job. Real bubblewrap, real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from process_api.deployment.cwl import RUN_PRELOAD
from process_api.runner.executor import End, JobRun
from process_api.runner.isolation import job_environment
from process_api.runner.local import SPARE_PREFIX, OwnSandbox
from process_api.runner.sandbox import Sandbox

#: What the job reports: its inputs, where the folder it sees as /inputs is on its
#: filesystem, and its /tmp.
REPORT = ('printf \'{"inputs": "%s", "mounted": "%s", "tmp": "%s"}\' "$(ls /inputs)" '
          '"$(grep " /inputs " /proc/self/mountinfo | cut -d" " -f4)" "$(ls /tmp)"; '
          'touch /tmp/left-by-a-job')


@pytest.fixture
def spares_in(tmp_path: Path) -> Path:
    """Where a launcher makes its spares' folders (the temporary folder's filesystem)."""
    return tmp_path


def started(where: Path, spares: int) -> OwnSandbox:
    return OwnSandbox(Sandbox.available(hidden=[]), job_environment(os.environ),
                      preload=RUN_PRELOAD, spares=spares, workspaces=where)


@pytest.fixture
async def launcher(spares_in: Path) -> AsyncIterator[OwnSandbox]:
    own = started(spares_in, 1)
    await own.start()
    try:
        yield own
    finally:
        await own.stop()


def staged_in(parent: Path) -> Path:
    folder = parent / f"staged-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    (folder / "sst.nc").write_text("data")
    return folder


@pytest.fixture
def staged() -> Iterator[Path]:
    """A job's staged inputs where the worker stages them (its temporary folder)."""
    folder = staged_in(Path(tempfile.gettempdir()))
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def staged_elsewhere() -> Iterator[Path]:
    """Staged inputs on another filesystem than the sandboxes' folders (a tmpfs)."""
    if os.stat("/dev/shm").st_dev == os.stat(tempfile.gettempdir()).st_dev:
        pytest.skip("/dev/shm is on the temporary folder's filesystem here")
    folder = staged_in(Path("/dev/shm"))
    yield folder
    shutil.rmtree(folder)


async def report(launcher: OwnSandbox, staged: Path) -> dict[str, str]:
    """The job's report, its process run to its end."""
    request = {"command": ["sh", "-c", REPORT], "inputs": {}, "limits": {}, "job": {}}
    started = await launcher.launch(JobRun("report", json.dumps(request).encode() + b"\n",
                                           inputs=staged))
    await started.release()
    messages = []
    while line := await started.stream.readline():
        messages.append(json.loads(line))
    await launcher.end(started, End.RELEASED)
    assert messages[-1] == {"returncode": 0}, messages
    return next(m["result"] for m in messages if "result" in m)


def spare_folders(where: Path) -> list[Path]:
    """The folders of the sandboxes started ahead there."""
    return list(where.glob(f"{SPARE_PREFIX}{os.getpid()}-*"))


async def test_each_job_takes_a_sandbox_started_ahead_of_it(launcher, spares_in: Path,
                                                            staged: Path) -> None:
    first = await report(launcher, staged)
    # its inputs were moved into the folder the sandbox saw from its start
    assert first["inputs"] == "sst.nc"
    assert first["mounted"].startswith(f"{spares_in}/{SPARE_PREFIX}{os.getpid()}-")
    assert first["mounted"].endswith("/inputs")
    assert list(staged.iterdir()) == []
    assert first["tmp"] == "job-3"
    (staged / "sst.nc").write_text("more data")
    second = await report(launcher, staged)
    # another sandbox, started in its place: nothing of the first job's is left in it
    assert second["mounted"].startswith(f"{spares_in}/{SPARE_PREFIX}")
    assert second["mounted"] != first["mounted"]
    assert (second["inputs"], second["tmp"]) == ("sst.nc", "job-3")
    # once stopped, every sandbox is gone with its folder (the inputs moved there too)
    await launcher.stop()
    assert spare_folders(spares_in) == []


async def test_inputs_that_cannot_move_get_a_sandbox_of_the_jobs_own(
        launcher, spares_in: Path, staged_elsewhere: Path, staged: Path) -> None:
    seen = await report(launcher, staged_elsewhere)
    assert seen["inputs"] == "sst.nc"
    assert seen["mounted"] == f"/{staged_elsewhere.name}"  # the tmpfs's own folder
    assert [p.name for p in staged_elsewhere.iterdir()] == ["sst.nc"]
    # the sandbox started ahead is kept for the next job
    assert len(spare_folders(spares_in)) == 1
    assert (await report(launcher, staged))["mounted"].startswith(f"{spares_in}/{SPARE_PREFIX}")


async def test_sandboxes_start_with_the_first_job_and_end_with_the_launcher(
        spares_in: Path, staged: Path) -> None:
    own = started(spares_in, 2)
    await own.start()
    assert spare_folders(spares_in) == []  # a worker that runs no deployed job starts none
    assert (await report(own, staged))["inputs"] == "sst.nc"
    await own.stop()
    assert spare_folders(spares_in) == []


async def test_a_dead_workers_folders_are_removed_by_the_next(spares_in: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = Path(tempfile.mkdtemp(prefix=f"{SPARE_PREFIX}{dead.pid}-", dir=spares_in))
    alive = Path(tempfile.mkdtemp(prefix=f"{SPARE_PREFIX}{os.getppid()}-", dir=spares_in))
    await started(spares_in, 1).start()
    assert (gone.exists(), alive.exists()) == (False, True)
