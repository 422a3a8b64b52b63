"""The `datetime` query parameter, checked before stock parses it: a value that is not an
RFC 3339 date-time, or has a field out of range, is a 400 in our words (stock passes its
parser's Python text through, e.g. timedelta's limits for an offset of +24:00). Used as a
route dependency on the GET endpoints that take `datetime`; stock then parses it as ever.
A date-time the database refuses (a filter's TIMESTAMP or INTERVAL literal) is said in the
same words (`refused_datetime`)."""

from __future__ import annotations

import re
from datetime import UTC

from asyncpg.exceptions import DatetimeFieldOverflowError, InvalidDatetimeFormatError
from fastapi import HTTPException, Request
from stac_fastapi.types.errors import InvalidQueryParameter
from stac_fastapi.types.rfc3339 import rfc3339_str_to_datetime

#: What the database says of a date-time it cannot read, when a search runs.
DATETIME_REFUSALS = (InvalidDatetimeFormatError, DatetimeFieldOverflowError)

OPEN = ("", "..")


def _words(where: str, part: str) -> str:
    shown = part if len(part) <= 64 else f"{part[:64]}…"
    return (f"{where}: {shown!r} is not an RFC 3339 date-time with every field in range (e.g. "
            "2020-01-01T00:00:00Z); an interval is two of them, or one and `..`, joined by "
            "`/`.")


def _refusal(part: str) -> HTTPException:
    return HTTPException(status_code=400, detail=_words("datetime", part))


def refused_datetime(error: Exception, datetime: str | None) -> InvalidQueryParameter:
    """A search's date-time the database refused (DATETIME_REFUSALS), in our words: the
    `datetime` parameter's, else a literal of the filter's."""
    quoted = re.search(r'"([^"\n]*)"', str(error))
    value = quoted.group(1) if quoted else str(error)
    return InvalidQueryParameter(_words("datetime" if datetime else "filter", value))


async def valid_datetime(request: Request) -> None:
    value = request.query_params.get("datetime")
    if not value:
        return
    parts = value.split("/", 1)
    instants = []
    for part in parts:
        if part in OPEN:
            continue
        try:
            instants.append(rfc3339_str_to_datetime(part).astimezone(UTC))
        except (ValueError, OverflowError):  # iso8601's ParseError is a ValueError
            raise _refusal(part) from None
    # (stock's words for this one say the opposite: "Start datetime cannot be before end")
    if len(instants) == 2 and instants[0] > instants[1]:
        raise HTTPException(status_code=400, detail=(
            f"datetime: the interval's start ({parts[0]}) is after its end ({parts[1]})."))
