"""What a process is: its declaration (`Process`) and what its run function receives
(`Context`). A process's `entry` names a function `run(inputs, context)`, importable as
`module:function`, run in a child OS process of a worker."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any, Protocol

import jsonschema

_ID = re.compile(r"^[A-Za-z0-9_.-]{1,256}$")
#: Where a job's process that declares `database` finds its own role's database URL (the
#: service's `DATABASE_URL` it never sees).
JOB_DATABASE_URL = "JOB_DATABASE_URL"
#: Every process runs asynchronously and can be dismissed (OGC job control options); a
#: process that declares `sync` may also answer with its results (`sync-execute`).
JOB_CONTROL_OPTIONS = ["async-execute", "dismiss"]


class Context(Protocol):
    """What a running process knows of its job, and may tell it."""

    job_id: str | None
    owner: str  # the caller: the process runs as them
    project: str | None  # the caller's group project, or None (personal)
    service_url: str | None  # the service root the job was submitted through

    def progress(self, percent: int, message: str | None = None) -> None: ...


RunFunction = Callable[[dict[str, Any], Context], dict[str, Any]]


def id_problem(process_id: str) -> str | None:
    """Why `process_id` cannot name a process, or None."""
    return None if _ID.match(process_id) else \
        f"process id {process_id!r}: use [A-Za-z0-9_.-], at most 256 characters"


class ProcessKind(StrEnum):
    """What a process is, which says how its jobs run."""

    BUILTIN = "builtin"
    DEFINED = "defined"
    DEPLOYED = "deployed"


@dataclass(frozen=True)
class Process:
    """One computation the service offers."""

    id: str  # may carry a version suffix, e.g. `publish-dataset@1.2`
    title: str
    description: str
    version: str
    inputs: Mapping[str, Any]  # JSON Schema of `processInputs`
    outputs: Mapping[str, Any]  # JSON Schema of the results
    entry: str = ""  # `module:function` of the run function (or a `command`)
    retries: int = 0  # how often a job whose worker died is started again
    database: bool = False  # its process gets JOB_DATABASE_URL (publishing writes items)
    network: bool = False  # its process may open connections (in the sandbox; database too)
    sync: bool = False  # a client may wait for its results (`Prefer: respond-sync`)
    # A process defined as data runs this argv instead (`definitions.py`, `command.py`)
    command: tuple[str, ...] = ()
    resources: Mapping[str, Any] | None = None  # `resources` of jobs that give none
    # Written into the job's working folder before it runs (a deployed process's package)
    files: Mapping[str, str] = field(default_factory=dict)
    # What it is: the service's own code (`builtin`), an operator's definition as data
    # (`defined`), or a user's package deployed through the API (`deployed`: its owner may
    # replace or undeploy it, OGC's `mutable`; each of its jobs runs in a sandbox of its
    # own, its inputs' data staged in and its files stored)
    kind: ProcessKind = ProcessKind.BUILTIN
    # The container images its tools run in (a deployed package's `DockerRequirement`s):
    # each job's tools run in them, its sandbox asking the worker (`container_broker`)
    images: tuple[str, ...] = ()
    # Its package is a CWL Workflow: on Slurm each of its containers is a Slurm job of its
    # own (its steps spread over the nodes: `slurm_step`)
    workflow: bool = False
    # Its inputs naming where its results are published (`visibility`, `catalog`: the
    # input's name), checked when a job is submitted as a deployed process's `publish`
    # section is, so that a job that could only fail there is refused
    publishes: Mapping[str, str] = field(default_factory=dict)

    # Made once per process (a cached property writes the instance's __dict__, which a
    # frozen dataclass allows): building a validator checks the schema itself, which cost
    # more than a whole `echo` job when done per job.
    @cached_property
    def inputs_validator(self) -> jsonschema.Draft202012Validator:
        return jsonschema.Draft202012Validator(dict(self.inputs))

    @cached_property
    def outputs_validator(self) -> jsonschema.protocols.Validator:
        """As `jsonschema.validate` chooses: the draft the schema names, else the latest."""
        schema = dict(self.outputs)
        return jsonschema.validators.validator_for(schema)(schema)

    @property
    def deployed(self) -> bool:
        """A user's package: OGC's `mutable`."""
        return self.kind == ProcessKind.DEPLOYED

    @property
    def job_control_options(self) -> list[str]:
        return ["sync-execute", *JOB_CONTROL_OPTIONS] if self.sync else JOB_CONTROL_OPTIONS

    def __post_init__(self) -> None:
        if problem := id_problem(self.id):
            raise ValueError(problem)
        if not self.command and ":" not in self.entry:
            raise ValueError(f"process {self.id}: entry must be 'module:function'")
