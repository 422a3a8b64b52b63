"""Processes defined as data: a folder of JSON files, each one process that runs a command
(a deployment adds a command-line tool without writing a Python package). Loaded at start
beside the built-in processes; a file that is not a valid definition stops the start with
one line naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from process_api.processes.definition import Process, ProcessKind
from process_api.processes.sections import RESOURCES

#: The definitions shipped with the project (the default folder).
SHIPPED = Path(__file__).with_name("shipped")


class DefinitionError(ValueError):
    """A definition file cannot be used; the message names the file and why."""


class ProcessDefinition(BaseModel):
    """One file: what the process is, and the command that runs it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    version: str
    title: str
    description: str
    inputs: dict[str, Any] = Field(description="JSON Schema of `processInputs`")
    outputs: dict[str, Any] = Field(description="JSON Schema of the results")
    command: list[str] = Field(min_length=1, description="argv: inputs as JSON on stdin, "
                               "results as a JSON object on stdout")
    resources: dict[str, Any] | None = Field(
        default=None, description="`resources` of a job that gives none (limits, requests)")
    sync: bool = False
    network: bool = Field(default=False, description="the command opens connections (jobs "
                          "run without network otherwise)")


def load_definitions(folders: list[Path]) -> list[Process]:
    """The processes of every `*.json` file in `folders`, in name order. A command whose
    program is not installed here is an error too: the process could never run."""
    processes = []
    for folder in folders:
        if not folder.is_dir():
            raise DefinitionError(f"{folder}: not a folder of process definitions")
        for path in sorted(folder.glob("*.json")):
            try:
                definition = ProcessDefinition.model_validate(json.loads(path.read_text()))
                # every job runs with limits: the standard `resources` section is offered
                properties = {"resources": RESOURCES,
                              **definition.inputs.get("properties", {})}
                process = Process(
                    id=definition.id, version=definition.version, title=definition.title,
                    description=definition.description,
                    inputs={**definition.inputs, "properties": properties},
                    outputs=definition.outputs, command=tuple(definition.command),
                    resources=definition.resources, sync=definition.sync,
                    network=definition.network, kind=ProcessKind.DEFINED)
            except (ValueError, ValidationError) as e:
                first = e.errors()[0] if isinstance(e, ValidationError) else None
                why = (f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first
                       else str(e))
                raise DefinitionError(f"{path}: {why}") from None
            if shutil.which(definition.command[0]) is None:
                raise DefinitionError(f"{path}: the command {definition.command[0]!r} is "
                                      "not installed here")
            processes.append(process)
    return processes
