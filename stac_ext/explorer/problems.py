"""What the explorer says when it cannot show something: a status and words for the user
(the routes answer it in the data API's error shape)."""

from __future__ import annotations


class ExploreError(Exception):
    """400 a bad choice (a variable, a column), 404 nothing there, 413 over the bytes
    bound, 422 a file the explorer cannot read, 502 the storage failed, 504 too slow."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def quantity(size: int) -> str:
    """A size as people read it (`512 MiB`)."""
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.3g} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
