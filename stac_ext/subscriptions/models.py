"""Request bodies of the subscriptions: the saved search, how she is told, a standing job."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Kind = Literal["created", "updated", "deleted"]


def _every_kind() -> list[Kind]:
    return ["created", "updated", "deleted"]

#: A catalog's path of ids (the catalogs tree's pattern).
CATALOG_PATH = r"^[A-Za-z0-9.-][A-Za-z0-9_.-]*(/[A-Za-z0-9.-][A-Za-z0-9_.-]*)*$"
_NAME = Field(min_length=1, max_length=256)


class SavedSearch(BaseModel):
    """An item search as `POST /search` takes it (its criteria, no paging), or within a
    catalog's subtree (`catalog`, as its `_search`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    collections: list[str] | None = Field(default=None, min_length=1, max_length=1000)
    bbox: list[float] | None = Field(default=None, min_length=4, max_length=6)
    intersects: dict[str, Any] | None = None
    datetime: str | None = Field(default=None, min_length=1, max_length=100)
    q: str | list[str] | None = None
    filter: dict[str, Any] | str | None = None
    filter_lang: Literal["cql2-json", "cql2-text"] | None = Field(default=None,
                                                                  alias="filter-lang")
    owner: str | None = Field(default=None, min_length=1, max_length=256)
    catalog: str | None = Field(default=None, max_length=4096, pattern=CATALOG_PATH,
                                description="A catalog's path of ids: the items its "
                                            "subtree links (as they are when items arrive).")

    @model_validator(mode="after")
    def _one_place(self) -> SavedSearch:
        if self.bbox is not None and self.intersects is not None:
            raise ValueError("bbox and intersects: give one place, not both")
        if self.bbox is not None and len(self.bbox) == 5:
            raise ValueError("bbox: 4 numbers (west, south, east, north) or 6 (with heights)")
        return self

    def as_search(self) -> dict[str, Any]:
        """The criteria as `POST /search` takes them."""
        body = self.model_dump(by_alias=True, exclude_none=True, exclude={"catalog"})
        if isinstance(body.get("q"), str):
            body["q"] = [body["q"]]
        return body


class Window(BaseModel):
    """When a window's run starts: at its count of items, or so long after its first item,
    whichever comes first."""

    model_config = ConfigDict(extra="forbid")

    items: int | None = Field(default=None, ge=1, le=10_000)
    seconds: float | None = Field(default=None, ge=1, le=366 * 86400)

    @model_validator(mode="after")
    def _some(self) -> Window:
        if self.items is None and self.seconds is None:
            raise ValueError("window: give `items`, `seconds`, or both")
        return self


class StandingJob(BaseModel):
    """A process run on each window's items, as its owner, its results published."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    process: str = _NAME
    items_input: str = Field(alias="itemsInput", min_length=1, max_length=256,
                             description="The process's file input (or array of them) "
                                         "given the window's items, as collection inputs.")
    inputs: dict[str, Any] = Field(default_factory=dict,
                                   description="Its other `processInputs`.")
    publish: dict[str, Any] | None = Field(
        default=None, description="The execution's `publish` section: its results "
                                  "published as items, with `derived_from` links to the "
                                  "window's items.")
    window: Window
    retries: int = Field(default=0, ge=0, le=10, description="Attempts after a failed one.")
    project: str | None = Field(default=None, min_length=1, max_length=256,
                                description="The job's `metadata.project`.")


class SubscriptionIn(BaseModel):
    """A new subscription."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, max_length=200)
    search: SavedSearch
    webhook: str | None = Field(default=None, max_length=2048, pattern=r"^https?://\S+$",
                                description="Where each event is POSTed, signed; without "
                                            "one, the feed only.")
    kinds: list[Kind] = Field(default_factory=_every_kind, min_length=1,
                              description="Which events: created, updated, deleted.")
    job: StandingJob | None = None


class SubscriptionChange(BaseModel):
    """A change of a subscription: only the fields given."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, max_length=200)
    search: SavedSearch | None = None
    webhook: str | None = Field(default=None, max_length=2048, pattern=r"^https?://\S+$")
    kinds: list[Kind] | None = Field(default=None, min_length=1)
    status: Literal["active", "paused"] | None = Field(
        default=None, description="`paused`: nothing is sent until `active` again (events "
                                  "wait); `active` resumes a paused one.")
