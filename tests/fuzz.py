"""`make fuzz`: schemathesis on both OpenAPI documents with many more examples than `make
test` (all phases, with and without tokens), for use before a release.

Own cluster in `.fuzz/` (port 5459), the demo data, the service in a real uvicorn with the
local development issuer; one schemathesis run per (API, token) pair, bounded in examples
and time; then the hostile-input pass (`tests/hostile.py`: huge numbers, deep and long
filters, forged paging tokens, deep bodies, NaN, in every parameter and body field, huge
search filters, costly packages to deploy), with and without tokens; then jobs reading
sources that lie, trickle and stall, and crowds of submissions beyond a quota
(`tests/hostile_sources.py`); prints each run's summary and exits non-zero on any finding.

    .venv/bin/python -m tests.fuzz [--examples 200] [--seconds 600]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from stac_ext.platform.auth.local_issuer import LocalIssuer
from stac_ext.platform.database.cluster import Cluster
from stac_ext.settings import Settings
from tests.hostile import hostile_pass
from tests.hostile_sources import QUOTA, sources_pass
from tests.support.http import free_port
from tests.support.issuer import ADMIN_RIGHT, DATA_CLIENT, PROCESS_CLIENT
from tests.support.uvicorn_process import uvicorn_process

CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance"
FINDINGS = re.compile(r"ST1\d\d [A-Z][a-z]+")
SUMMARY = re.compile(r"^.*(generated|passed|failed|errored|Test cases|API operations).*$",
                     re.M)
app = typer.Typer(add_completion=False)


def schemathesis(root: str, api: str, examples: int, seconds: int, token: str | None
                 ) -> tuple[bool, str]:
    command = [str(Path(sys.executable).with_name("schemathesis")), "run",
               f"{root}/{api}/api", "--url", f"{root}/{api}" if api == "processes" else root,
               "--checks", CHECKS, "--max-examples", str(examples), "--max-time",
               str(seconds), "--workers", "2", "--suppress-health-check", "all",
               "--phases", "examples,coverage,fuzzing,stateful"]
    if token:
        command += ["--header", f"Authorization: Bearer {token}"]
    out = subprocess.run(command, capture_output=True, text=True,
                         env={**os.environ, "NO_COLOR": "1"}, timeout=seconds * 3 + 120)
    report = out.stdout + out.stderr
    findings = sorted(set(FINDINGS.findall(report)))
    summary = "\n".join(line for m in SUMMARY.finditer(report)
                        if len(line := m.group(0).strip()) < 200)  # not a dumped traceback
    return not findings and "generated" in report, summary + (
        f"\nfindings: {', '.join(findings)}" if findings else "")


@app.command()
def main(
    examples: Annotated[int, typer.Option(help="examples per operation")] = 200,
    seconds: Annotated[int, typer.Option(help="time bound of each run")] = 600,
    data_dir: Annotated[Path, typer.Option(help="cluster and keys")] = Path(".fuzz"),
) -> None:
    data_dir = data_dir.resolve()
    cluster = Cluster(datadir=data_dir / "pg", port=5459)
    cluster.start()
    port = free_port()
    env = {**os.environ, "DATABASE_URL": cluster.dsn, "GEOCATALOG_DATA_DIR": str(data_dir),
           "GEOCATALOG_PORT": str(port), "OIDC_ISSUER": "", "JWKS_URL": "",
           "LOAD_DEMO_DATA": "false", "OUTBOUND_ALLOW": "127.0.0.0/8",
           # what the hostile sources and crowds meet (tests/hostile_sources.py)
           "JOB_STAGE_BYTES": "1Mi", "JOB_WALL_SECONDS": "30", "JOB_STAGE_STALL_SECONDS": "3",
           "JOB_USER_QUEUED": str(QUOTA)}
    for command in (["migrate"], ["demo-data"]):
        subprocess.run([sys.executable, "-m", "stac_ext.cli", *command], env=env, check=True,
                       capture_output=True)
    ok = True
    with uvicorn_process("stac_ext.app:create_app", port, env, "/healthz"):
        settings = Settings(database_url=cluster.dsn, geocatalog_data_dir=data_dir,
                            geocatalog_port=port)
        assert settings.local_issuer
        issuer = LocalIssuer(settings.issuer_key_file, settings.local_issuer)
        tokens = {"data": issuer.mint("fuzzer", DATA_CLIENT, [], [ADMIN_RIGHT, "updateCatalog"],
                                      24 * 3600),
                  "processes": issuer.mint("fuzzer", PROCESS_CLIENT, ["fuzz-lab"],
                                           ["deployProcess"], 24 * 3600)}
        for api in ("data", "processes"):
            for token in (tokens[api], None):
                passed, summary = schemathesis(f"http://127.0.0.1:{port}", api, examples,
                                               seconds, token)
                ok &= passed
                print(f"== /{api} {'with' if token else 'without'} a token: "
                      f"{'ok' if passed else 'FINDINGS'}\n{summary}\n", flush=True)
        documents = {"": "/data/api", "/processes": "/processes/api"}
        for label, keys in (("with tokens", {"": tokens["data"],
                                             "/processes": tokens["processes"]}),
                            ("without tokens", {})):
            problems = hostile_pass(f"http://127.0.0.1:{port}", documents, keys, heavy=True)
            ok &= not problems
            print(f"== hostile inputs {label}: {'ok' if not problems else 'FINDINGS'}"
                  + "".join(f"\n  {p[:300]}" for p in problems) + "\n", flush=True)
        problems = sources_pass(f"http://127.0.0.1:{port}", tokens["processes"],
                                issuer.mint("crowd", PROCESS_CLIENT, [], [], 3600))
        ok &= not problems
        print(f"== hostile sources and crowds: {'ok' if not problems else 'FINDINGS'}"
              + "".join(f"\n  {p[:300]}" for p in problems) + "\n", flush=True)
    raise typer.Exit(0 if ok else 1)


if __name__ == "__main__":
    app()
