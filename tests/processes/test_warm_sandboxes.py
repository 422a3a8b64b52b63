"""Sandboxes started ahead for deployed processes' jobs (`JOB_WARM_SANDBOXES`): a job takes
one, sees its staged inputs there, and the sandbox serves no other job; inputs that cannot
move into it get a sandbox started for the job. Real bubblewrap, real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from process_api.deployment import cwl_schemas
from process_api.deployment.cwl import RUN_PRELOAD
from process_api.runner.executor import End, JobRun
from process_api.runner.isolation import job_environment
from process_api.runner.own_sandbox import FILES_PREFIX, SPARE_PREFIX, OwnSandbox
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


#: What a job sees of the CWL schemas the worker made once: the file, and whether it may
#: write it.
SCHEMAS_SEEN = ('printf \'{"inputs": "%s", "mounted": "", "tmp": "%s"}\' '
                '"$(ls /run 2>/dev/null)" "$(touch /run/cwl-schemas.pickle 2>/dev/null && echo '
                'written || echo read-only)"')


async def test_every_sandbox_reads_the_cwl_schemas_made_once_for_them(
        spares_in: Path, staged: Path) -> None:
    own = OwnSandbox(Sandbox.available(hidden=[]), job_environment(os.environ),
                     preload=RUN_PRELOAD, spares=1, workspaces=spares_in,
                     made=cwl_schemas.made)
    await own.start()
    request = {"command": ["sh", "-c", SCHEMAS_SEEN], "inputs": {}, "limits": {}, "job": {}}

    async def seen() -> dict[str, str]:
        run = await own.launch(JobRun("schemas", json.dumps(request).encode() + b"\n",
                                      inputs=staged))
        await run.release()
        messages = [json.loads(line) async for line in _lines(run.stream)]
        await own.end(run, End.RELEASED)
        assert messages[-1] == {"returncode": 0}, messages
        return next(m["result"] for m in messages if "result" in m)

    schemas = {"inputs": "cwl-schemas.pickle", "mounted": "", "tmp": "read-only"}
    # the first jobs' sandboxes may start while the file is being made: they build theirs
    firsts = [await seen()]
    while firsts[-1] != schemas and len(firsts) < 10:
        firsts.append(await seen())
    assert firsts[-1] == schemas and all(s["inputs"] == "" for s in firsts[:-1]), firsts
    assert [await seen(), await seen()] == [schemas, schemas]  # from then on, every one
    made = list(spares_in.glob(f"{FILES_PREFIX}{os.getpid()}-*"))
    assert [p.name for p in made[0].iterdir()] == ["cwl-schemas.pickle"]
    await own.stop()
    assert list(spares_in.glob(f"{FILES_PREFIX}*")) == []


async def _lines(stream) -> AsyncIterator[bytes]:
    while line := await stream.readline():
        yield line


def test_the_schemas_made_once_load_and_run_a_tool(tmp_path: Path) -> None:
    """A fresh interpreter loads the worker's file instead of building the schemas, and
    cwltool runs a tool with them."""
    files = cwl_schemas.made(tmp_path)
    assert files == [(tmp_path / "cwl-schemas.pickle", "/run/cwl-schemas.pickle")]
    (tmp_path / "tool.cwl").write_text(
        "cwlVersion: v1.2\nclass: CommandLineTool\nbaseCommand: echo\n"
        "inputs:\n  msg: {type: string, inputBinding: {position: 1}}\n"
        "outputs:\n  out: {type: stdout}\nstdout: out.txt\n")
    (tmp_path / "job.json").write_text('{"msg": "hello"}')
    code = (
        "import io, sys\nfrom pathlib import Path\n"
        "from cwltool import process\nfrom cwltool.main import main\n"
        "from process_api.deployment import cwl_schemas\n"
        "assert cwl_schemas.load(Path(sys.argv[1]))\n"
        "assert sorted(process.SCHEMA_CACHE) == ['v1.0', 'v1.2']\n"
        "out = io.StringIO()\n"
        "assert main(['--no-container', '--quiet', '--outdir', 'out', 'tool.cwl', "
        "'job.json'], stdout=out, custom_schema_callback=lambda: None) == 0\n"
        "print(Path('out/out.txt').read_text(), end='')\n")
    done = subprocess.run([sys.executable, "-c", code, str(files[0][0])], cwd=tmp_path,
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "hello\n"), done.stderr
    # a file it cannot read is none: the schemas are built as without it
    (tmp_path / "broken.pickle").write_bytes(b"not a pickle")
    assert cwl_schemas.load(tmp_path / "broken.pickle") is False
    assert cwl_schemas.load(tmp_path / "missing.pickle") is False
