"""Container images and packages for the container tests: the CDO image built offline
(`tests/containers/build-image`, once per content hash), and CWL tools that run in it."""

from __future__ import annotations

import functools
import json
import subprocess

from tests.support.cwl import cdo_mean
from tests.support.paths import ROOT

BUILD_IMAGE = ROOT / "tests" / "containers" / "build-image"


@functools.cache
def cdo_image() -> str:
    """The tag of the CDO image, built when this host has not got it."""
    return subprocess.run([str(BUILD_IMAGE)], capture_output=True, text=True,
                          check=True).stdout.strip()


def containers_of(job_id: str) -> list[str]:
    """The names of the containers of a job, running or not (`podman ps -a`)."""
    found = subprocess.run(["podman", "ps", "--all", "--format", "json"],
                           capture_output=True, text=True, check=True).stdout
    return [c["Names"][0] for c in json.loads(found or "[]")
            if str((c.get("Labels") or {}).get("geocatalog.job", "")).endswith(job_id)]


def cdo_mean_in(process_id: str, image: str) -> str:
    """CDO's time mean of NetCDF files (`tests.support.cwl.cdo_mean`) in a container."""
    return cdo_mean(process_id).replace(
        "baseCommand:", f"requirements:\n  DockerRequirement: {{dockerImageId: \"{image}\"}}\n"
                        "baseCommand:", 1)


def shell_in(process_id: str, image: str, script: str) -> str:
    """A tool running `script` with bash in the container; its stdout the `report` file,
    an optional `data` file input at `$1`."""
    quoted = json.dumps(script)
    return f"""\
cwlVersion: v1.2
class: CommandLineTool
id: {process_id}
requirements:
  DockerRequirement: {{dockerImageId: "{image}"}}
baseCommand: [bash, -c, {quoted}, tool]
inputs:
  data:
    type: File?
    inputBinding: {{position: 1}}
stdout: report.txt
outputs:
  report: {{type: stdout}}
"""
