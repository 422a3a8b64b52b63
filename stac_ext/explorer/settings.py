"""The explorer's settings: how the service reads `s3://` assets, and the bounds of what
one request may read."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from process_api import MEMORY_PATTERN


class ExplorerSettings(BaseSettings):
    """Data explorer and quicklooks"""

    # the S3 keys are secrets: errors never echo values
    model_config = SettingsConfigDict(extra="ignore", hide_input_in_errors=True,
                                      use_attribute_docstrings=True)

    assets_s3: dict[str, Any] | None = None
    """How the service itself reads `s3://` assets (the explorer, quicklooks), as a
    process's `s3` section (JSON: `endpoint`, `accessKeyId`, `secretAccessKey`,
    `defaultRegion`, `sessionToken`); its endpoint goes through the outbound policy. The
    keys stay on the server. Unset: the demo's S3 server (`make demo-s3`,
    `http://127.0.0.1:9000`) with the embedded database, else anonymous access."""
    explorer_read_bytes: Annotated[str, Field(pattern=MEMORY_PATTERN)] = "512Mi"
    """The most bytes one explorer request (or one quicklook) reads of an asset: a map, a
    time series or a table's page over it is refused (413), saying how much it would
    read."""
    explorer_seconds: float = Field(default=30.0, gt=0, le=600)
    """The longest one explorer request (or one quicklook) reads and draws: then it is
    answered 504."""
    explorer_renders: int = Field(default=2, ge=1, le=64)
    """Explorer requests and quicklooks one API process reads and draws at once (each in a
    thread); the others wait their turn."""
