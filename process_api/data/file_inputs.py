"""A deployed process's file inputs: given by their contents, or by reference to data (an
item, a collection with a query as OGC API Processes Part 3's collection input, a search
of this service's catalog, or a file's own http(s) or `s3://` URL).

At submission every reference is resolved as the caller (`Catalog`, the composition root's
reader of the data API): a job never reads an item its submitter cannot. What it gives, the
files to stage in, is the job record's `staging`; the worker fetches them
(`staging`) before the job's sandbox starts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from process_api.processes.outbound import (
    CREDENTIALS_REFUSED,
    TargetRefused,
    check_reachable,
    has_credentials,
)


class InputRefused(Exception):
    """A reference that cannot be read, answered with its status (400; 404 for data the
    caller cannot read), OGC exception type (`name`) and words (`detail`)."""

    def __init__(self, status_code: int, name: str, detail: str) -> None:
        super().__init__(detail)
        self.status_code, self.name, self.detail = status_code, name, detail


#: The largest file given by its contents, in characters.
FILE_CHARS = 1 << 20
_URL = {"type": "string", "maxLength": 8192, "pattern": r"^(https?|s3)://\S+$",
        "description": "an http(s) or s3:// URL"}
_ASSETS = {"type": "array", "maxItems": 64, "items": {"type": "string", "maxLength": 256},
           "description": "the item assets to read (default: those with the role `data`)"}
BY_CONTENTS = {
    "type": "object", "required": ["contents"], "additionalProperties": False,
    "properties": {"contents": {"type": "string", "maxLength": FILE_CHARS},
                   "basename": {"type": "string", "pattern": r"^[A-Za-z0-9._-]{1,255}$"}}}
BY_HREF = {
    "type": "object", "required": ["href"], "additionalProperties": False,
    "description": "An item or a search of this catalog (its URL), or a file's URL.",
    # OGC's link form (`type`, `rel`, `title`, `hreflang`) as clients send it: read, unused
    "properties": {"href": _URL, "assets": _ASSETS,
                   **{name: {"type": "string", "maxLength": 256}
                      for name in ("type", "rel", "title", "hreflang")}}}
BY_COLLECTION = {
    "type": "object", "required": ["collection"], "additionalProperties": False,
    "description": "A collection of this catalog and which of its items (OGC API Processes "
                   "Part 3 collection input).",
    "properties": {
        "collection": _URL,
        "bbox": {"type": "array", "minItems": 4, "maxItems": 4, "items": {"type": "number"}},
        "datetime": {"type": "string", "maxLength": 100},
        "q": {"type": "string", "maxLength": 1000},
        "filter": {"type": ["object", "string"]},
        "filter-lang": {"enum": ["cql2-json", "cql2-text"]},
        "assets": _ASSETS}}
FILE_INPUT = {
    "description": "A file: its contents, or a reference to data (`href`: an item or a "
                   "search of this catalog, or a file's URL; `collection`: a collection "
                   "and a query).",
    "oneOf": [BY_CONTENTS, BY_HREF, BY_COLLECTION]}


class Catalog(Protocol):
    """The data API, read as a caller (the composition root's)."""

    async def files(self, reference: Mapping[str, Any], caller: Any, service_url: str,
                    limit: int) -> list[dict[str, Any]] | None:
        """The files a reference gives (at most `limit` + 1), read as `caller`: each its
        `href` (the data's own URL), `type`, and the `item` (URL) and `asset` it is
        of, and who reads that item (`visibility`, `project`). None when
        it is not a reference to this catalog. LookupError (its message for the user) when
        an item or collection does not exist for the caller, ValueError when the reference
        is not one the catalog answers."""
        ...

    async def publish_refusal(self, path: str, caller: Any, project: str | None,
                              service_url: str) -> str | None:
        """Why a job of `caller`'s (acting in `project`) may not publish its results into
        the catalog at `path`, in words for the user; None: it may."""
        ...


def _is_file(schema: Any) -> bool:
    """A file input's schema, today's or one a process stored when it was deployed: by its
    forms (one requires `contents`, one `href`)."""
    forms = schema.get("oneOf") if isinstance(schema, Mapping) else None
    required = {tuple(form.get("required") or ()) for form in forms or ()
                if isinstance(form, Mapping)}
    return {("contents",), ("href",)} <= required


def _file_inputs(schema: Mapping[str, Any]) -> Iterator[tuple[str, bool]]:
    """(name, whether it is an array of files) of each file input of an inputs schema."""
    for name, sub in (schema.get("properties") or {}).items():
        if _is_file(sub):
            yield name, False
        elif isinstance(sub, Mapping) and _is_file(sub.get("items")):
            yield name, True


#: OGC's qualified value (`{"value", "mediaType"}`): a file given by its text.
_QUALIFIED = frozenset({"value", "mediaType", "schema"})


def _by_contents(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("value"), str) and \
            set(value) <= _QUALIFIED:
        return {"contents": value["value"]}
    return value


def as_contents(inputs: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs with each file given as OGC's qualified value (`{"value": text,
    "mediaType"}`, as OGC clients send a complex input) given by its `contents`."""
    found = dict(inputs)
    for name, many in _file_inputs(schema):
        if name not in found:  # an optional one, not given
            continue
        value = found[name]
        if not many:
            found[name] = _by_contents(value)
        elif isinstance(value, list):
            found[name] = [_by_contents(each) for each in value]
    return found


def current_file_inputs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An inputs schema with each file input's forms today's: they are the service's, not
    the package's (a deployed process stored those of its day)."""
    if "properties" not in schema:
        return dict(schema)
    properties = dict(schema["properties"] or {})
    for name, many in _file_inputs(schema):
        sub = properties[name]
        properties[name] = {**sub, "items": {**sub["items"], "oneOf": FILE_INPUT["oneOf"]}} \
            if many else {**sub, "oneOf": FILE_INPUT["oneOf"]}
    return {**schema, "properties": properties}


def references(inputs: Mapping[str, Any], schema: Mapping[str, Any]
               ) -> Iterator[tuple[str, int | None, dict[str, Any]]]:
    """(input name, index in its array or None, reference) of every file given by
    reference."""
    for name, many in _file_inputs(schema):
        value = inputs.get(name)
        given: list[tuple[int | None, Any]] = [(None, value)] if not many else \
            list(enumerate(value)) if isinstance(value, list) else []
        for index, each in given:
            if isinstance(each, dict) and "contents" not in each:
                yield name, index, each


async def resolve(inputs: Mapping[str, Any], schema: Mapping[str, Any], catalog: Catalog | None,
                  caller: Any, service_url: str, max_files: int) -> list[dict[str, Any]]:
    """The job's `staging`: per reference, `{"input", "index", "files"}`. An OGC error
    (InputRefused: 400, or 404 for data the caller cannot read) for a reference that cannot
    be read."""
    staging: list[dict[str, Any]] = []
    total = 0
    for name, index, reference in references(inputs, schema):
        where = f"processInputs.{name}" + (f"[{index}]" if index is not None else "")
        if any(isinstance(url, str) and has_credentials(url)
               for url in (reference.get("href"), reference.get("collection"))):
            raise InputRefused(400, "invalid-input", f"{where}: {CREDENTIALS_REFUSED} (S3 keys "
                               "go in the request's `s3` section).")
        try:
            files = None if catalog is None else \
                await catalog.files(reference, caller, service_url, max_files - total)
        except LookupError as e:
            raise InputRefused(404, "no-such-input", f"{where}: {e}") from None
        except ValueError as e:
            raise InputRefused(400, "invalid-input", f"{where}: {e}") from None
        if files is None:  # a file's own URL
            if "collection" in reference:
                raise InputRefused(400, "invalid-input", f"{where}: a collection input names a "
                               "collection of this catalog.")
            files = [{"href": reference["href"]}]
            # the service's own (a job's file: read from its store) is no outbound target
            if reference["href"].startswith(("http://", "https://")) and \
                    not reference["href"].startswith(service_url):
                try:  # said now, as a callback's is, not when the job stages it
                    await check_reachable(reference["href"])
                except TargetRefused as e:
                    raise InputRefused(400, "invalid-input", f"{where}: {e}") from None
        if not files:
            raise InputRefused(400, "invalid-input", f"{where}: the reference gives no file.")
        if stores := [f["href"] for f in files if _is_store(f)]:
            # staged as one object it "does not exist": said now, not when the job stages
            raise InputRefused(400, "invalid-input", f"{where}: {stores[0]} is a Zarr store, "
                               "a folder of objects, and a file input takes files: choose "
                               "another of the item's assets with `assets`.")
        if index is None and len(files) > 1:
            raise InputRefused(400, "invalid-input", f"{where}: the reference gives "
                           f"{len(files)} files, and the input takes one (an array input "
                           "takes many).")
        total += len(files)
        if total > max_files:
            raise InputRefused(400, "invalid-input", f"{where}: the references give more than "
                           f"{max_files} files, the most one job reads (JOB_STAGE_FILES).")
        staging.append({"input": name, "index": index, "files": files})
    return staging


def _is_store(file: Mapping[str, Any]) -> bool:
    """Whether a catalog's file is a Zarr store (by its media type, else its name)."""
    media_type = str(file.get("type") or "").lower()
    return "zarr" in media_type or str(file["href"]).rstrip("/").lower().endswith(".zarr")


def _within(visibility: str, project: str | None, read: dict[str, Any]) -> bool:
    """Whether every reader of items published for `visibility` (`project`) reads the
    input item `read` too."""
    seen = read.get("visibility") or "public"
    return seen == "public" or visibility == "private" or (
        visibility == "project" and seen == "project" and read.get("project") == project)


def publish_refusal(visibility: str, project: str | None, staging: list[dict[str, Any]],
                    where: str = "publish.visibility") -> str | None:
    """Why items published for `visibility` (`project`) from these staged inputs would show
    them to readers who may not read an input (a catalog item of narrower visibility), or
    None. A result is published no wider than its inputs: its lineage names them. (Items
    for a project need the job's: the publisher refused them once the job had run.)"""
    if visibility == "project" and project is None:
        return (f"{where}: project shares the results with the job's project: name one "
                "of yours in metadata.project.")
    for entry in staging:
        for file in entry["files"]:
            if "item" in file and not _within(visibility, project, file):
                return (f"{where}: {visibility} would show the result to readers "
                        f"who may not read its input {file['item']} "
                        f"({file.get('visibility')}): publish it no wider than its inputs.")
    return None
