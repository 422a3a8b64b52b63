"""The cookies of a browser session: the session's (its random id, nothing else) and the
sign-in's (the sealed state of one sign-in in flight). HttpOnly (no script reads them),
SameSite=Lax (another site's requests carry them only on a top-level navigation, which is
how the identity provider sends the browser back), `Path=/`; over https `Secure`, and named
`__Host-...`, which a browser takes only from this very host."""

from __future__ import annotations

from collections.abc import Iterable

SESSION = "geocatalog-session"
SIGN_IN = "geocatalog-sign-in"
#: A cookie value longer than this is not ours (read no further)
MAX_VALUE = 4096


def name(base: str, secure: bool) -> str:
    return f"__Host-{base}" if secure else base


def set_cookie(base: str, value: str, max_age: int, secure: bool) -> str:
    """A `Set-Cookie` value (`max_age` 0: the browser forgets it)."""
    parts = [f"{name(base, secure)}={value}", "Path=/", f"Max-Age={max(0, max_age)}",
             "HttpOnly", "SameSite=Lax"]
    if secure:
        parts.append("Secure")
    return "; ".join(parts)


def read(headers: Iterable[tuple[bytes, bytes]], base: str) -> tuple[str, bool] | None:
    """The cookie's value in a request's headers (either name), and whether it is the
    `__Host-` one."""
    wanted = {base.encode(): False, f"__Host-{base}".encode(): True}
    for header, value in headers:
        if header != b"cookie" or len(value) > 16 * MAX_VALUE:
            continue
        for pair in value.split(b";"):
            key, equals, found = pair.strip().partition(b"=")
            if equals and key in wanted and 0 < len(found) <= MAX_VALUE:
                return found.decode("latin-1"), wanted[key]
    return None
