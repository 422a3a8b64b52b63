"""The `f` query parameter (OGC APIs' output format): read off a request's query, and the
values no endpoint answers. The web face's negotiation applies it (`f=json` taken off,
`f=html` a browser's page, another value a 400)."""

from __future__ import annotations

from urllib.parse import unquote_plus

#: What every endpoint answers (besides the HTML the web face serves for `f=html`).
FORMATS = ("json",)


def without_f(query: bytes) -> tuple[bytes, list[str]]:
    """The query string without its `f` parameters (others byte for byte), and their values."""
    if b"f" not in query and b"%66" not in query:  # no key can be `f`: most queries
        return query, []
    kept, values = [], []
    for part in query.split(b"&"):
        key, _, value = part.partition(b"=")
        if unquote_plus(key.decode("latin-1")) == "f":
            values.append(unquote_plus(value.decode("latin-1")))
        elif part:
            kept.append(part)
    return b"&".join(kept), values


def refusal(values: list[str]) -> str | None:
    """Why a request asking for these formats (`f` values) is refused; None: it is not."""
    unknown = [v for v in values if v not in FORMATS]
    if not unknown:
        return None
    return (f"Unknown output format f={unknown[0]!r}: this endpoint answers "
            f"{', '.join(f'f={f}' for f in FORMATS)}.")
