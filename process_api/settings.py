"""The process API's settings (`ProcessSettings`): its processes, its job engine and
workers, the jobs' ceilings, quotas and data, where they run; read from the environment by
the composition root (the whole service's `Settings` holds them), each consumer of this
package handed the object. A job setting is a field here and its use, nowhere else.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from process_api.processes.definitions import SHIPPED as SHIPPED_DEFINITIONS
from process_api.processes.outbound import OutboundSettings
from process_api.processes.resources import MEMORY_PATTERN
from process_api.runner.isolation import JOB_ENVIRONMENT
from stac_ext.platform.service.settings import CommaSeparated, comma_separated

#: How to make a JOB_SECRETS_KEY, for the error that asks for one.
MAKE_KEY = ("python3 -c 'import base64, secrets; "
            "print(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())'")


class ProcessSettings(OutboundSettings):
    """Processes and jobs"""

    # errors never echo values: JOB_SECRETS_KEY is a secret
    model_config = SettingsConfigDict(extra="ignore", hide_input_in_errors=True,
                                      use_attribute_docstrings=True)

    processes_prefix: str = Field(default="/processes", pattern=r"^(/[A-Za-z0-9_.-]+)+$")
    """Where the process API is mounted."""
    in_process_worker: bool = True
    """`serve` runs a job worker in the API process."""
    worker_concurrency: int = 2
    """Jobs the in-process worker runs at once."""
    job_queue: str = "jobs"
    """The queue this API submits to and its workers take from."""
    extra_processes: CommaSeparated = Field(default_factory=list)
    """More processes, besides the built-ins and the `geocatalog.processes` entry points:
    `module:NAME` of a Process or a list of them, comma-separated."""
    process_definitions: Annotated[list[Path], NoDecode, BeforeValidator(comma_separated)] = \
        Field(default_factory=lambda: [SHIPPED_DEFINITIONS])
    """Folders of processes defined as data (JSON files, each running a command),
    comma-separated; the shipped examples' folder by default (empty: none)."""
    job_heartbeat_seconds: float = 2.0
    """How often a worker says it is alive."""
    sync_wait_seconds: float = Field(default=30.0, ge=0, le=600)
    """The longest an execution request with `Prefer: respond-sync` / `wait=N` waits for its
    job (a process declaring `sync`); then it answers 201 as for any job."""
    job_poll_seconds: float = Field(default=5.0, gt=0, le=3600)
    """How often an idle worker looks for jobs it was not told of: a job queued is told to
    every worker at once, and a job's end to its worker (the next job of its owner may
    run), so this only bounds a notice lost."""
    job_stalled_seconds: float = 10.0
    """A job whose worker is silent this long is failed or retried."""
    job_shutdown_seconds: float = Field(default=10.0, ge=0)
    """How long a stopping worker (SIGTERM, or the service's in-process worker at shutdown)
    lets its running jobs finish; then it ends them: each is queued again when its process
    allows a retry, else failed."""
    job_outage_seconds: float = Field(default=300.0, ge=0, le=86400)
    """The longest database outage a worker waits out: its running jobs go on (their
    progress unwritten meanwhile, their ends recorded once it is back). Longer, the worker
    stops and its jobs fail, saying the database was away."""
    job_secrets_key: str | None = None
    """32 random bytes, base64url: encrypts secret inputs for the workers, shared by the API
    and every worker; unset: `GEOCATALOG_DATA_DIR/job-secrets.key` (one machine only).
    Anything else is refused at start in one line."""
    job_sandbox: Literal["bwrap", "none"] = "bwrap"
    """`bwrap`: every job's process in bubblewrap's sandbox (a read-only system, no data dir,
    no worker `/proc`, network only when its process declares it); `none` where jobs are
    isolated otherwise (e.g. one container per job). With `bwrap` missing, `serve` and
    `worker` refuse to start."""
    job_warm_sandboxes: int = Field(default=2, ge=0, le=64)
    """Sandboxes each worker keeps started ahead for jobs of deployed processes, once it has
    run one, each with cwltool and the CWL schemas loaded (a quarter of a second of a core,
    and 60 MB, each): a job without containers takes one and starts at once, and another is
    started in its place. Each serves one job, as a sandbox started for it would. 0: each
    job's sandbox starts with it."""
    job_containers: Literal["podman", "none"] = "podman"
    """`podman`: the tools of deployed packages with a `DockerRequirement` run in podman's
    containers, each its tool's sandbox (`docs/operators/containers.md`), when podman is
    installed; `none`: such jobs fail, saying so."""
    container_registries: CommaSeparated = Field(default_factory=list)
    """The registries a deployed package's images may be pulled from (`dockerPull`),
    comma-separated, e.g. `ghcr.io,docker.io`; empty (the default): local images only,
    which an admin adds (`geocatalog images`)."""
    job_executor: Literal["local", "slurm"] = "local"
    """Where jobs' processes run: `local`, on the host of the worker that took the job;
    `slurm`, each submitted to Slurm as a job of its own, in its sandbox on the node Slurm
    chooses (`docs/operators/slurm.md`)."""
    slurm_folder: Path | None = None
    """With `JOB_EXECUTOR=slurm`: a folder the workers' hosts and Slurm's nodes share (the
    same path on each), where each job's folder is made (its staged inputs, Slurm's output
    of it). Required."""
    slurm_account: str | None = None
    """With `JOB_EXECUTOR=slurm`: the Slurm account of a job of no project (a project's
    job's account is its project); unset: Slurm's default for the workers' user."""
    slurm_partition: str | None = None
    """With `JOB_EXECUTOR=slurm`: the partition jobs are submitted to; unset: Slurm's
    default partition."""
    job_cpu_max: float = Field(default=1024, gt=0, le=1024)
    """The most cores a job may ask for (`resources.limits.cpu`, `requests.cpu`): more is a
    400 at submission. With Slurm, a job's cpu becomes its `--cpus-per-task`."""
    job_memory: Annotated[str, Field(pattern=MEMORY_PATTERN)] = "2Gi"
    """A job's memory limit when its `resources.limits.memory` gives none (a Kubernetes
    quantity). It bounds all the job's processes together, its `/tmp` writes included,
    where the machine offers cgroups (`docs/operators/security.md`)."""
    job_memory_max: Annotated[str, Field(pattern=MEMORY_PATTERN)] = "16Gi"
    """The most memory a job may ask for (`resources.limits.memory`, `requests.memory`):
    more is a 400 at submission."""
    job_processes: int = Field(default=512, ge=8, le=1_000_000)
    """The most processes and threads one job runs at once (a cgroup's `pids.max`)."""
    job_tmp_size: Annotated[str, Field(pattern=MEMORY_PATTERN)] = "1Gi"
    """The size of a job sandbox's `/tmp` (a tmpfs, the only place a job writes; a fork
    server's jobs share one)."""
    job_wall_seconds: float = Field(default=86400.0, gt=0, le=30 * 86400)
    """The longest a job runs, from its start: then it is stopped and fails, saying so."""
    job_cgroups: bool = True
    """Put each job in a cgroup of its own (memory, processes) where the machine offers
    cgroup v2 or v1's `memory` and `pids` to the worker; false: rlimits only."""
    job_user_running: int = Field(default=1, ge=1, le=10_000)
    """Jobs of one user that run at once, across every worker: the user's other jobs wait
    their turn while workers take other users' (one user's backlog never holds every
    worker)."""
    job_user_queued: int = Field(default=100, ge=1, le=1_000_000)
    """Jobs one user may have queued or running: one more is refused with a 429 and
    `Retry-After`."""
    job_project_queued: int = Field(default=500, ge=1, le=1_000_000)
    """Jobs of one project (`metadata.project`, all its members) queued or running: one more
    is refused with a 429 and `Retry-After`."""
    job_environment: CommaSeparated = Field(default_factory=lambda: list(JOB_ENVIRONMENT))
    """The variables of the worker's environment that jobs' processes get, comma-separated
    (an allow-list: nothing else of the worker's environment reaches a job). A job's `HOME`
    is its sandbox's `/tmp`, and a process declaring `database` gets `JOB_DATABASE_URL`."""
    job_stage_bytes: Annotated[str, Field(pattern=MEMORY_PATTERN)] = "10Gi"
    """The most data one job's inputs may stage in (all its referenced files together): a
    job over it fails before it runs, saying so."""
    job_stage_files: int = Field(default=1000, ge=1, le=100_000)
    """The most files one job's inputs may reference: more is a 400 at submission."""
    job_result_files: int = Field(default=1000, ge=1, le=1_000_000)
    """The most result files one job stores: a job that writes more fails, saying so, and
    what it stored is removed when it is dismissed."""
    job_stage_stall_seconds: float = Field(default=30.0, gt=0, le=3600)
    """A source of a job's inputs that sends no byte for this long fails the job, named.
    (Staging also stops at the job's wall time, and when the job is dismissed.)"""
    results_store: str = ""
    """Where jobs' files go when a request names no storage of its own (`results.prefix`):
    an fsspec URL, `s3://bucket/prefix` in production (every worker writes it); unset: the
    folder `results` of the data dir, which suits one machine."""
    results_store_options: dict[str, Any] = Field(default_factory=dict)
    """The results store's fsspec options, JSON (for S3: `{"endpoint_url": ..., "key": ...,
    "secret": ...}`)."""
    callback_timeout_seconds: float = Field(default=5.0, gt=0, le=60)
    """Seconds of each attempt of a job callback (`subscriber`)."""
    callbacks_in_flight: int = Field(default=16, ge=1, le=1000)
    """Callbacks a worker sends at once (the others wait their turn: a silent target costs
    that many connections)."""

    @field_validator("job_secrets_key")
    @classmethod
    def _secrets_key(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            size = len(base64.urlsafe_b64decode(value.strip() + "=" * (-len(value.strip()) % 4)))
        except (binascii.Error, ValueError):
            size = -1
        if size != 32:
            raise ValueError(f"must be 32 random bytes, base64url-encoded; make one with: "
                             f"{MAKE_KEY}")
        return value
