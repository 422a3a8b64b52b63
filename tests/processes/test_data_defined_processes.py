"""Processes defined as data: a JSON file names a command; it runs in the job's own
process with the same limits, dismissal and secret handling as any process."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.support.cli import run_cli
from tests.support.jobs import execute, until, wait_for


async def test_the_shipped_example_runs(alice_processes: httpx.AsyncClient) -> None:
    described = (await alice_processes.get("/processes/processes/summarise-numbers")).json()
    assert described["jobControlOptions"] == ["sync-execute", "async-execute", "dismiss"]
    assert set(described["inputs"]["properties"]) == {"numbers", "resources"}
    r = await execute(alice_processes, "summarise-numbers", {"numbers": [1, 2, 3, 6]})
    assert r.status_code == 201, r.text
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "successful", job
    results = (await alice_processes.get(f"{r.headers['Location']}/results")).json()
    assert results == {"count": 4, "sum": 12, "min": 1, "max": 6, "mean": 3}
    r = await execute(alice_processes, "summarise-numbers", {"numbers": [2.5]},
                      headers={"Prefer": "respond-sync"})
    assert (r.status_code, r.json()) == (200, {"count": 1, "sum": 2.5, "min": 2.5,
                                               "max": 2.5, "mean": 2.5})
    job = (await alice_processes.get(r.headers["Location"])).json()
    assert job["status"] == "successful"


def _alive(pid: int) -> bool:
    """Running (a zombie, waiting to be reaped, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _sleeping_commands() -> set[int]:
    """Host pids of running `test-command-sleep` commands (a job's process runs in the
    sandbox's process tree: its own pid means nothing here)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"# test-command-sleep" in \
                    (entry / "cmdline").read_bytes() and _alive(int(entry.name)):
                found.add(int(entry.name))
        except OSError:
            continue
    return found


async def test_dismissal_stops_the_command(alice_processes: httpx.AsyncClient) -> None:
    before = _sleeping_commands()
    r = await execute(alice_processes, "test-command-sleep", {})
    assert r.status_code == 201, r.text
    assert await until(lambda: _sleeping_commands() - before)
    [pid] = _sleeping_commands() - before
    dismissed = await alice_processes.delete(r.headers["Location"])
    assert (dismissed.status_code, dismissed.json()["status"]) == (200, "dismissed")
    assert await until(lambda: not _alive(pid)), "the command outlived its dismissed job"


async def test_a_failing_command_reports_its_stderr_without_secrets(
        alice_processes: httpx.AsyncClient) -> None:
    r = await execute(alice_processes, "test-command-fail", {"token": "tok-8c1f-secret"})
    job = await wait_for(alice_processes, r.headers["Location"], "successful", "failed")
    assert job["status"] == "failed"
    message = job["message"]
    assert message.startswith("The command exited with status 3: ")
    assert message.endswith("lots of output\n\nprovider refused the token ***")
    assert len(message) < 2100  # the end of stderr, not all of it
    assert "tok-8c1f-secret" not in json.dumps(job)


@pytest.mark.slow
def test_a_bad_definition_stops_the_start_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text(json.dumps({
        "id": "broken", "version": "1", "title": "t", "description": "d",
        "inputs": {"type": "object"}, "outputs": {"type": "object"}}))
    out = run_cli("worker", env={"PROCESS_DEFINITIONS": str(tmp_path),
                                 "DATABASE_URL": "postgresql://u@127.0.0.1:1/d",
                                 "GEOCATALOG_DATA_DIR": str(tmp_path)})
    assert (out.returncode, out.stderr.strip()) == (
        2, f"PROCESS_DEFINITIONS: {tmp_path / 'broken.json'}: command: Field required")
    (tmp_path / "broken.json").write_text(json.dumps({
        "id": "missing", "version": "1", "title": "t", "description": "d",
        "inputs": {"type": "object"}, "outputs": {"type": "object"},
        "command": ["no-such-tool-here"]}))
    out = run_cli("worker", env={"PROCESS_DEFINITIONS": str(tmp_path),
                                 "DATABASE_URL": "postgresql://u@127.0.0.1:1/d",
                                 "GEOCATALOG_DATA_DIR": str(tmp_path)})
    assert (out.returncode, out.stderr.strip()) == (
        2, f"PROCESS_DEFINITIONS: {tmp_path / 'broken.json'}: the command "
           "'no-such-tool-here' is not installed here")
