"""The `datetime` query parameter, checked before stock parses it: a value that is not an
RFC 3339 date-time, or has a field out of range, is a 400 in our words (stock passes its
parser's Python text through, e.g. timedelta's limits for an offset of +24:00). Used as a
route dependency on the GET endpoints that take `datetime`; stock then parses it as ever."""

from __future__ import annotations

from datetime import UTC

from fastapi import HTTPException, Request
from stac_fastapi.types.rfc3339 import rfc3339_str_to_datetime

OPEN = ("", "..")


def _refusal(part: str) -> HTTPException:
    shown = part if len(part) <= 64 else f"{part[:64]}…"
    return HTTPException(status_code=400, detail=(
        f"datetime: {shown!r} is not an RFC 3339 date-time with every field in range (e.g. "
        "2020-01-01T00:00:00Z); an interval is two of them, or one and `..`, joined by `/`."))


async def valid_datetime(request: Request) -> None:
    value = request.query_params.get("datetime")
    if not value:
        return
    for part in value.split("/", 1):
        if part in OPEN:
            continue
        try:
            rfc3339_str_to_datetime(part).astimezone(UTC)
        except (ValueError, OverflowError):  # iso8601's ParseError is a ValueError
            raise _refusal(part) from None
