"""How a file a user's job wrote is served: as data, never as a page or a script of this
origin (its bytes are anyone's code): `nosniff`, a sandboxing CSP, downloaded rather than
shown, and the types a browser would run or render served as plain bytes."""

from __future__ import annotations

#: The media types a browser renders or runs (markup, scripts, styles, vector images).
ACTIVE = ("text/html", "application/xhtml+xml", "image/svg+xml", "text/javascript",
          "application/javascript", "application/ecmascript", "text/ecmascript",
          "text/xml", "application/xml", "text/css", "text/xsl")


def served_type(media_type: str) -> str:
    """The type a file is served as: its own, but bytes for what a browser would run."""
    base = media_type.partition(";")[0].strip().lower()
    active = base in ACTIVE or base.endswith(("+xml", "script"))
    return "application/octet-stream" if active else media_type


def file_headers(key: str, size: int) -> dict[str, str]:
    """The headers of a user's file: its size, a download of its name, nothing run."""
    name = key.rsplit("/", 1)[-1].replace('"', "_")
    return {"Content-Length": str(size),
            "Content-Disposition": f'attachment; filename="{name}"',
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'"}
