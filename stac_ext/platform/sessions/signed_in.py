"""Who the request's browser session signed in (for pages to say so and to offer what the
user's rights allow; every request is still the APIs' to decide)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from starlette.requests import Request

#: Where the middleware leaves it on the request's state.
STATE_KEY = "signed_in"


@dataclass(frozen=True)
class SignedIn:
    username: str
    groups: tuple[str, ...]
    rights: tuple[str, ...]
    expires: datetime  # the session's end

    def public(self) -> dict[str, Any]:
        """What a page may know of it: no token, no session id."""
        return {"username": self.username, "groups": list(self.groups),
                "rights": list(self.rights),
                "expires": self.expires.isoformat().replace("+00:00", "Z")}


def signed_in(request: Request) -> SignedIn | None:
    """The user the request's session signed in; None: no session (or a bearer token of
    its own, which the APIs read as they always do)."""
    found = getattr(request.state, STATE_KEY, None)
    return found if isinstance(found, SignedIn) else None
