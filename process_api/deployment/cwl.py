"""CWL application packages (OGC API Processes Part 2, `cwl`): a document read within
bounds, validated by cwltool's loader, which fetches nothing (a package holds all it runs:
`run:` steps inline or in its `$graph`), and the description of the process it holds:
the `inputs` / `outputs` JSON Schemas of the whole body derived from its CWL inputs and outputs.

A tool's container (`DockerRequirement`) names a local image or one to pull; which
registries may be pulled from is the deployment's to check (`CwlProcess.pulled`). Refused
with a 400 naming the problem: an image built, loaded or imported by the package, network
access (no outbound filter for arbitrary programs yet; a v1.0 document's, which cwltool's
upgrade adds as a hint, is declined: its tools run without), and inputs or outputs this
service cannot carry as JSON (directories, records).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from process_api.data.file_inputs import FILE_INPUT
from process_api.data.job_sections import JOB_SECTIONS
from process_api.deployment.references import reference_problems
from process_api.runner.containers import image_of, image_problem

#: The largest package accepted, in bytes.
MAX_BYTES = 1 << 20
#: The deepest nesting of a package's YAML or JSON.
MAX_DEPTH = 64
#: The most steps of a package's workflows, and processes of its `$graph`.
MAX_STEPS = 256
#: Where the loader believes the package lives (it is never read from there).
URI = "file:///deployed/package.cwl"
#: What a job's working folder calls the package (`cwl_run`).
FILE_NAME = "package.cwl"
#: What a job's working folder calls the file naming the package's process it runs.
TARGET_NAME = "target"
#: The run function of every deployed process (in its job's own process).
RUN_ENTRY = "process_api.deployment.cwl_run:run"
#: What a deployed process's job loads first (in a sandbox started ahead of it).
RUN_PRELOAD = ("process_api.runner.child", RUN_ENTRY.partition(":")[0])
#: Where cwltool notes the version a document was written in, before it upgraded it.
ORIGINAL_VERSION = "http://commonwl.org/cwltool#original_cwlVersion"

_PRIMITIVES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"}, "int": {"type": "integer"}, "long": {"type": "integer"},
    "float": {"type": "number"}, "double": {"type": "number"},
    "boolean": {"type": "boolean"}}
FILE_OUTPUT = {
    "type": "object", "required": ["basename", "size", "checksum"],
    "description": "A file the process wrote, stored: where (`href`), its media type, size "
                   "and SHA-256 checksum (multihash); `contents` too when it is text of 64 "
                   "KiB or less. Asked to publish: the items made of it (`items`), and "
                   "what of it was not published, and why (`unpublished`).",
    "properties": {"basename": {"type": "string"}, "size": {"type": "integer"},
                   "checksum": {"type": "string"}, "href": {"type": "string"},
                   "type": {"type": "string"}, "contents": {"type": "string"},
                   "items": {"type": "array", "items": {"type": "string"}},
                   "unpublished": {"type": "array", "items": {"type": "string"}}}}


class PackageError(ValueError):
    """The package cannot be deployed; the message says why (a 400)."""


@dataclass(frozen=True)
class CwlProcess:
    """What a package deploys: the process's id, its description, and the CWL to run."""

    id: str
    target: str  # the process's id in the document (`cwltool package.cwl#target`)
    title: str
    description: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    document: str  # the CWL text, as given
    images: tuple[str, ...] = ()  # the containers its tools run in (`DockerRequirement`)
    workflow: bool = False  # a CWL `Workflow` (its steps may run apart)
    pulled: tuple[str, ...] = ()  # those of them pulled from a registry (`dockerPull`)


def _depth_checked(text: str) -> Any:
    """The YAML (or JSON) document, refused when it nests deeper than MAX_DEPTH or uses
    aliases (a few aliases expand to gigabytes)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        CollectionStartEvent,
    )

    yaml = YAML(typ="safe", pure=True)
    try:
        depth = 0
        for event in yaml.parse(io.StringIO(text)):
            if isinstance(event, AliasEvent):
                raise PackageError("The package uses YAML aliases; write it out in full.")
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise PackageError(f"The package nests deeper than {MAX_DEPTH} levels.")
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
        return yaml.load(text)
    except YAMLError as e:
        raise PackageError(f"The package is not YAML or JSON: {e}".strip()[:500]) from None


def read_package(text: str, target: str | None = None) -> CwlProcess:
    """The process a CWL document holds (`target`: its id in a `$graph`; by default `main`,
    else the first), validated; PackageError saying why not."""
    if len(text.encode()) > MAX_BYTES:
        raise PackageError(f"The package is larger than {MAX_BYTES} bytes.")
    document = _depth_checked(text)
    if not isinstance(document, dict):
        raise PackageError("The package is not a CWL document (a mapping).")
    if (steps := _steps(document)) > MAX_STEPS:
        raise PackageError(f"The package has {steps} steps and processes; at most "
                           f"{MAX_STEPS}.")
    target = _target(document, target)
    tool = _load(text, target)
    if not _javascript(tool) and (problem := next(
            (p for each in _tools(tool) for p in reference_problems(each.tool, "package.cwl")),
            None)):
        raise PackageError(f"Invalid CWL: {problem}")
    images, pulled = _containers(tool)
    spec = tool.tool
    inputs = _inputs_schema(spec["inputs"], _secrets(tool))
    outputs = _outputs_schema(spec["outputs"])
    doc = spec.get("doc") or ""
    return CwlProcess(id=target, target=target, title=str(spec.get("label") or target),
                      description="\n".join(doc) if isinstance(doc, list) else str(doc),
                      inputs=inputs, outputs=outputs, document=text,
                      images=tuple(sorted(images)), pulled=tuple(sorted(pulled)),
                      workflow=spec.get("class") == "Workflow")


def _steps(document: Any) -> int:
    """The steps of every workflow in a document, and the processes of its `$graph`."""
    count, pending = 0, [document]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("steps", "$graph") and isinstance(value, list | dict):
                    count += len(value)
                pending.append(value)
        elif isinstance(node, list):
            pending += node
    return count


def _target(document: dict[str, Any], chosen: str | None) -> str:
    graph = document.get("$graph")
    if graph is None:
        own = str(document.get("id") or "").lstrip("#")
        if chosen and chosen != own:
            raise PackageError(f"The package holds no process {chosen!r}.")
        return own  # "": the document itself (its application package names it)
    if not isinstance(graph, list):
        raise PackageError("`$graph` is not a list.")
    ids = [str(entry.get("id") or "").lstrip("#") for entry in graph if isinstance(entry, dict)]
    if chosen is not None:
        if chosen not in ids:
            raise PackageError(f"The package holds no process {chosen!r} (its `$graph` has "
                               f"{', '.join(map(repr, ids))}).")
        return chosen
    return "main" if "main" in ids else next((i for i in ids if i), "main")


def _load(text: str, target: str) -> Any:
    """cwltool's tool object, validated; only the package itself can be read."""
    from cwltool.context import LoadingContext
    from cwltool.load_tool import load_tool
    from cwltool.workflow import default_make_tool
    from schema_salad.exceptions import SchemaSaladException
    from schema_salad.fetcher import Fetcher

    class PackageOnly(Fetcher):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        def fetch_text(self, url: str, content_types: list[str] | None = None) -> str:
            if url.split("#")[0] == URI:
                return text
            raise PackageError(f"The package refers to {url}: a package holds all it runs "
                               "(steps inline or in its `$graph`).")

        def check_exists(self, url: str) -> bool:
            return url.split("#")[0] == URI

        def urljoin(self, base: str, url: str) -> str:
            return urljoin(base, url)

    context = LoadingContext({"fetcher_constructor": PackageOnly, "do_update": True})
    context.construct_tool_object = default_make_tool
    try:
        return load_tool(f"{URI}#{target}" if target else URI, context)
    except PackageError:
        raise
    except (SchemaSaladException, ValueError, KeyError, TypeError) as e:
        message = re.sub(r"(?:file://|(?:\.\./)*)/?deployed/package\.cwl", "package.cwl",
                         str(e)).strip()[:2000]
        if "undefined reference" in message:
            message += "\n(a package holds all it runs: steps inline or in its `$graph`)"
        raise PackageError(f"Invalid CWL: {message}") from None


def _tools(tool: Any) -> Iterator[Any]:
    """The tool and, in a workflow, every step's tool."""
    yield tool
    for step in getattr(tool, "steps", ()):
        yield from _tools(step.embedded_tool)


def _containers(tool: Any) -> tuple[set[str], set[str]]:
    """The images the package's tools run in, and those pulled from a registry; refused:
    an image the package builds, loads or imports, and network access."""
    # cwltool upgrades a v1.0 document to today's CWL, adding a `NetworkAccess` hint to keep
    # v1.0's meaning (network by default): a hint, which the job's sandbox declines
    upgraded = tool.metadata.get(ORIGINAL_VERSION) == "v1.0"
    images, pulled = set(), set()
    for each in _tools(tool):
        hints = [h for h in each.hints if not (upgraded and _kind(h) == "NetworkAccess")]
        for requirement in [*each.requirements, *hints]:
            kind = _kind(requirement)
            if kind == "DockerRequirement":
                # its registry is checked where the deployment's settings are
                if problem := image_problem(dict(requirement), allowed=None):
                    raise PackageError(problem)
                images.add(image_of(requirement))
                if "dockerImageId" not in requirement:
                    pulled.add(str(requirement["dockerPull"]))
            if kind == "NetworkAccess" and requirement.get("networkAccess") is not False:
                raise PackageError("NetworkAccess: deployed processes run without network "
                                   "here.")
    return images, pulled


def _javascript(tool: Any) -> bool:
    """Whether any of the package's tools may run JavaScript."""
    return any(_kind(r) == "InlineJavascriptRequirement"
               for each in _tools(tool) for r in [*each.requirements, *each.hints])


def _kind(requirement: Any) -> str:
    return str(requirement.get("class", "")).rsplit("#", 1)[-1]


def _secrets(tool: Any) -> set[str]:
    """The inputs cwltool's `Secrets` hint names: stored encrypted and scrubbed from logs
    as any `writeOnly` input."""
    return {_name(str(name)) for each in [*tool.requirements, *tool.hints]
            if str(each.get("class", "")).endswith("Secrets")
            for name in each.get("secrets") or []}


def _name(identifier: str) -> str:
    """`file:///deployed/package.cwl#main/step/input` -> `input`."""
    return identifier.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _optional(kind: Any) -> bool:
    return isinstance(kind, list) and "null" in kind


def _schema(kind: Any, where: str, output: bool) -> dict[str, Any]:
    if isinstance(kind, list):
        options = [k for k in kind if k != "null"]
        if len(options) == 1:
            return _schema(options[0], where, output)
        return {"anyOf": [_schema(k, where, output) for k in options]}
    if isinstance(kind, str):
        if kind in _PRIMITIVES:
            return dict(_PRIMITIVES[kind])
        if kind in ("File", "stdout", "stderr"):
            return FILE_OUTPUT if output else FILE_INPUT
        raise PackageError(f"{where}: the type {kind} is not offered (strings, numbers, "
                           "booleans, enums, files and arrays of them are).")
    if isinstance(kind, dict):
        if kind.get("type") == "enum":
            return {"type": "string", "enum": [_name(s) for s in kind.get("symbols", [])]}
        if kind.get("type") == "array":
            return {"type": "array", "items": _schema(kind.get("items"), where, output)}
        raise PackageError(f"{where}: the type {kind.get('type')} is not offered (strings, "
                           "numbers, booleans, enums, files and arrays of them are).")
    raise PackageError(f"{where}: a type this service cannot read.")


def _inputs_schema(inputs: list[dict[str, Any]], secrets: set[str]) -> dict[str, Any]:
    properties: dict[str, Any] = dict(JOB_SECTIONS)
    required = []
    for given in inputs:
        name = _name(given["id"])
        if name in JOB_SECTIONS:
            raise PackageError(f"inputs.{name}: the name is the job's own (its limits, "
                               f"storage, results, publishing: {', '.join(JOB_SECTIONS)}).")
        schema = _schema(given["type"], f"inputs.{name}", output=False)
        for key, value in (("title", given.get("label")), ("description", given.get("doc")),
                           ("default", given.get("default"))):
            if value is not None:
                schema[key] = value
        if name in secrets:
            schema["writeOnly"] = True
        properties[name] = schema
        if not _optional(given["type"]) and "default" not in given:
            required.append(name)
    return {"type": "object", "required": required, "additionalProperties": False,
            "properties": properties}


def _outputs_schema(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    properties = {}
    required = []
    for given in outputs:
        name = _name(given["id"])
        properties[name] = _schema(given["type"], f"outputs.{name}", output=True)
        if not _optional(given["type"]):
            required.append(name)
    return {"type": "object", "required": required, "properties": properties}
