"""The execution request body: the `processInputs` form, or OGC's standard `inputs`."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from process_api.processes.outbound import CREDENTIALS_REFUSED, has_credentials


class Metadata(BaseModel):
    model_config = ConfigDict(extra="allow")

    project: str | None = Field(default=None, min_length=1, max_length=256,
                                description="A group project of the caller; omitted: "
                                "the personal project.")


def _callback_url(url: str | None) -> str | None:
    """An http(s) URL, without credentials (the job's record keeps it)."""
    if url is not None and not re.fullmatch(r"https?://\S+", url):
        raise ValueError("an http(s) URL")
    if url is not None and has_credentials(url):
        raise ValueError(CREDENTIALS_REFUSED)
    return url


_URL = Field(default=None, max_length=2048)
CallbackUrl = Annotated[str | None, AfterValidator(_callback_url)]


class Subscriber(BaseModel):
    """Where the worker POSTs when the job starts, succeeds, fails (OGC `callback`)."""

    model_config = ConfigDict(extra="forbid")

    successUri: CallbackUrl = _URL
    inProgressUri: CallbackUrl = _URL
    failedUri: CallbackUrl = _URL


class ExecuteRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    metadata: Metadata | None = None
    subscriber: Subscriber | None = None
    processInputs: dict[str, Any] | None = None
    inputs: dict[str, Any] | None = None

    def process_inputs(self) -> dict[str, Any]:
        return self.processInputs if self.processInputs is not None else (self.inputs or {})
