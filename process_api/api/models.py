"""The execution request body: the `processInputs` form, or OGC's standard `inputs`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Metadata(BaseModel):
    model_config = ConfigDict(extra="allow")

    project: str | None = Field(default=None, min_length=1, max_length=256,
                                description="A group project of the caller; omitted: "
                                "the personal project.")


_URL = Field(default=None, max_length=2048, pattern=r"^https?://[^\s]+$")


class Subscriber(BaseModel):
    """Where the worker POSTs when the job starts, succeeds, fails (OGC `callback`)."""

    model_config = ConfigDict(extra="forbid")

    successUri: str | None = _URL
    inProgressUri: str | None = _URL
    failedUri: str | None = _URL


class ExecuteRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    metadata: Metadata | None = None
    subscriber: Subscriber | None = None
    processInputs: dict[str, Any] | None = None
    inputs: dict[str, Any] | None = None

    def process_inputs(self) -> dict[str, Any]:
        return self.processInputs if self.processInputs is not None else (self.inputs or {})
