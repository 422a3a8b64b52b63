"""What a job may ask of its worker's containers (`container_broker`), and where an image
may come from (`containers`): the rules, without podman."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from process_api.runner.container_broker import (
    WORKSPACE_PREFIX,
    Broker,
    RequestRefused,
    forget_dead_workspaces,
)
from process_api.runner.container_run import ContainerJob
from process_api.runner.containers import (
    Mount,
    Podman,
    image_problem,
    pull_problem,
    registry_of,
)

pytestmark = pytest.mark.unit
IMAGE = "localhost/tool:1"


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    """A job whose `/tmp` is `tmp_path/work/tmp` and whose inputs are `tmp_path/staged`."""
    (tmp_path / "work" / "tmp" / "job-3" / "out").mkdir(parents=True)
    (tmp_path / "staged").mkdir()
    (tmp_path / "staged" / "sst.nc").write_bytes(b"data")
    (tmp_path / "secret").mkdir()
    job = ContainerJob("job-id", frozenset([IMAGE]), memory_bytes=2**28, processes=64)
    return Broker(Podman("podman"), None, job, tmp_path / "work", {
        "/tmp": (tmp_path / "work" / "tmp", True), "/inputs": (tmp_path / "staged", False)})


def test_a_request_becomes_a_container_of_the_jobs_folders(broker: Broker,
                                                          tmp_path: Path) -> None:
    run = broker._run(["--volume=/tmp/job-3/out:/Xy", "--volume=/inputs/sst.nc:/var/lib/cwl/"
                       "stg1/sst.nc", "--workdir=/Xy", "--rm", "--env=HOME=/Xy", IMAGE,
                       "cdo", "timmean", "/var/lib/cwl/stg1/sst.nc"], "c1")
    assert run.mounts == [
        Mount(tmp_path / "work" / "tmp" / "job-3" / "out", "/Xy", writable=True),
        Mount(tmp_path / "staged" / "sst.nc", "/var/lib/cwl/stg1/sst.nc", writable=False)]
    assert (run.image, list(run.command), run.workdir, run.environment) == (
        IMAGE, ["cdo", "timmean", "/var/lib/cwl/stg1/sst.nc"], "/Xy", {"HOME": "/Xy"})
    # the tool (not root) writes in its output folder
    assert (tmp_path / "work" / "tmp" / "job-3" / "out").stat().st_mode & 0o777 == 0o777
    command = Podman("podman").create_command(run)
    for option in ("--network", "none", "--read-only", "--cap-drop", "all",
                   "no-new-privileges", "--user", "65534:65534", "--pull", "never"):
        assert option in command
    assert command[-4:] == ["localhost/tool:1", "cdo", "timmean", "/var/lib/cwl/stg1/sst.nc"]


@pytest.mark.parametrize(("request_", "says"), [
    (["--volume=/etc:/etc", IMAGE], "The folder /etc is not the job's"),
    (["--volume=/tmp/../etc:/x", IMAGE], "The folder /tmp/../etc is not the job's"),
    (["--volume=/tmp/job-3/link:/x", IMAGE], "The folder /tmp/job-3/link is not the job's"),
    (["--volume=/tmp/job-3/missing:/x", IMAGE], "The folder /tmp/job-3/missing is not the "
                                               "job's: a container sees only the job's own "
                                               "folders."),
    (["--privileged", IMAGE], "The container option --privileged is not offered."),
    (["--volume=/tmp/job-3:/x", "--net=host", IMAGE], "The container option --net is not "
                                                      "offered."),
    (["docker.io/library/alpine", "sh"], "The image docker.io/library/alpine is not one "
                                         "this process declared."),
    (["--rm"], "A container request names its image."),
    (["--volume=/tmp/a:/b:/c", IMAGE], "A volume is `source:target`"),
    (["--volume=/tmp/job-3:/x,source=/etc", IMAGE],
     "A volume's paths have no ',' (/tmp/job-3:/x,source=/etc)."),
])
def test_a_request_beyond_the_job_is_refused(broker: Broker, tmp_path: Path,
                                            request_: list[str], says: str) -> None:
    os.symlink(tmp_path / "secret", tmp_path / "work" / "tmp" / "job-3" / "link")
    with pytest.raises(RequestRefused, match="^" + re.escape(says)):
        broker._run(request_, "c1")


def test_only_the_output_folder_and_tmp_are_writable(broker: Broker) -> None:
    run = broker._run(["--volume=/tmp/job-3:/tmp", "--volume=/tmp/job-3/out:/data",
                       "--workdir=/Xy", IMAGE], "c1")
    assert [m.writable for m in run.mounts] == [True, False]


@pytest.mark.parametrize(("image", "registry", "allowed", "problem"), [
    ("alpine", "docker.io", [], "the registry docker.io, which this service does not allow "
                                "(CONTAINER_REGISTRIES: none, local images only)"),
    ("ghcr.io/osgeo/gdal:latest", "ghcr.io", ["ghcr.io"], None),
    ("localhost/cdo:1", "localhost", [], None),
    ("registry.example:5000/x/y", "registry.example:5000", ["ghcr.io"],
     "the registry registry.example:5000, which this service does not allow "
     "(CONTAINER_REGISTRIES: ghcr.io)"),
    ("library/alpine:3", "docker.io", ["docker.io"], None),
])
def test_where_an_image_may_come_from(image: str, registry: str, allowed: list[str],
                                      problem: str | None) -> None:
    assert registry_of(image) == registry
    found = pull_problem(image, allowed)
    assert (found is None) == (problem is None)
    if problem is not None:
        assert found is not None and problem in found


@pytest.mark.parametrize(("requirement", "problem"), [
    ({"dockerImageId": "--privileged"}, "DockerRequirement: '--privileged' is not an image "
                                        "name."),
    ({"dockerPull": "alpine; rm -rf /"}, "DockerRequirement: 'alpine; rm -rf /' is not an "
                                         "image name."),
    ({"dockerPull": "localhost/cdo:1", "dockerLoad": "https://example.org/x.tar"},
     "DockerRequirement: dockerLoad is not offered (images are never built or loaded from "
     "a package); name a local image (dockerImageId) or one of an allowed registry "
     "(dockerPull)."),
    ({"dockerImageId": "sha256:3b4017e5550c"}, None),
    ({"dockerPull": "ghcr.io/osgeo/gdal:3.9@sha256:abc"}, None),
])
def test_what_names_an_image(requirement: dict[str, object], problem: str | None) -> None:
    assert image_problem(requirement, allowed=None) == problem


def test_the_job_folders_of_dead_workers_are_removed() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = Path(tempfile.mkdtemp(prefix=f"{WORKSPACE_PREFIX}{dead.pid}-"))
    alive = Path(tempfile.mkdtemp(prefix=f"{WORKSPACE_PREFIX}{os.getppid()}-"))
    try:
        forget_dead_workspaces()
        assert (gone.exists(), alive.exists()) == (False, True)
    finally:
        shutil.rmtree(alive, ignore_errors=True)
        shutil.rmtree(gone, ignore_errors=True)


def test_the_client_a_tool_starts_loads_nothing_of_the_workers() -> None:
    """Each tool's container request starts a Python for the client: it loaded the broker
    (asyncio, the cgroups, podman's commands), 80 ms of each tool's start."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys; from process_api.runner.container_client import "
         "main; print(sorted(m for m in sys.modules if m.startswith('process_api')), "
         "'asyncio' in sys.modules)"], capture_output=True, text=True, check=True).stdout
    assert loaded == ("['process_api', 'process_api.runner', "
                      "'process_api.runner.container_client'] False\n")
