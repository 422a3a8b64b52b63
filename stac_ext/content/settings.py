"""Generated content's settings: on or off, and the platform's tools items link to."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class ContentSettings(BaseSettings):
    """Generated content"""

    model_config = SettingsConfigDict(extra="ignore", use_attribute_docstrings=True)

    generated_content: bool = True
    """Generated item content (extension URIs, example / explorer / notebook links); off
    only to measure what it costs (`make bench`)."""
    explorer_url_template: str | None = None
    """The platform's data explorer, opening a Zarr / Parquet / CSV asset (`{href}`: the
    asset's address, URL-encoded), e.g. `https://explorer.example.org/?source={href}`; each
    such asset then links to it (`rel: explorer`). Unset: no explorer link."""
    notebook_url_template: str | None = None
    """The platform's notebook service, running a notebook example (`{href}`: the
    notebook's address), e.g. `https://hub.example.org/hub/user-redirect/lab?fromURL={href}`;
    each notebook example then links to it (`rel: notebook`). Unset: no notebook link."""
