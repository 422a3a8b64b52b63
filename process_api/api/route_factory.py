"""The base of the process API's route classes, on titiler's factory: the dependencies are
attributes (swap one, not a method), the router is made with the class, and each endpoint is
registered by a method of its own (`register_<endpoint>`; `endpoints` names them, in the
router's order)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from fastapi import APIRouter

from process_api.api.service import CallerDependency, ProcessService


@dataclass
class RouteFactory:
    """`service`: what the routes ask of the engine; `user`: the caller (a token of the
    process client). A subclass names its router's `prefix`, `tags` and `endpoints`."""

    service: ProcessService
    user: CallerDependency
    router: APIRouter = field(init=False)
    prefix: ClassVar[str] = ""
    tags: ClassVar[tuple[str, ...]] = ()
    endpoints: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        self.router = APIRouter(prefix=self.prefix, tags=list(self.tags))
        self.register_routes()

    def register_routes(self) -> None:
        for endpoint in self.endpoints:
            getattr(self, f"register_{endpoint}")()
