"""Database URLs that name a cluster rather than a server: libpq's multi-host form,
`postgresql://user:pw@db1:5432,db2:5432,db3:5432/geocatalog`, which psycopg (libpq) and
asyncpg both read, trying the hosts in turn.

`target_session_attrs` says which server of them a connection wants: `read-write` (the
primary: every part that writes, and `migrate` and `load`) or `prefer-standby` (a replica
if one answers: the data API's reads). A URL listing several hosts and naming none gets
the part's own, so that a write never lands on a replica; one host is left as it is.
Imports only the standard library.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, unquote

READ_WRITE = "read-write"
PREFER_STANDBY = "prefer-standby"
TARGET = "target_session_attrs"

_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<netloc>[^/?#]*)"
                  r"(?P<path>[^?#]*)(?P<query>\?[^#]*)?(?P<fragment>#.*)?$")


def hosts(url: str) -> list[str]:
    """The `host:port` entries of a URL (`host` alone where it names no port)."""
    match = _URL.match(url)
    if match is None:
        return []
    where = match["netloc"].rpartition("@")[2]
    return [host for host in where.split(",") if host]


def per_host(url: str) -> list[str]:
    """`url` once for each of its hosts (the same role, database and parameters)."""
    match = _URL.match(url)
    if match is None:
        return [url]
    credentials, at, _ = match["netloc"].rpartition("@")
    return [f"{match['scheme']}://{credentials}{at}{host}{match['path']}{match['query'] or ''}"
            f"{match['fragment'] or ''}" for host in hosts(url)] or [url]


def target_of(url: str) -> str:
    """The URL's `target_session_attrs` (libpq's default: `any`)."""
    match = _URL.match(url)
    found = parse_qs((match["query"] or "")[1:]).get(TARGET) if match else None
    return found[-1] if found else "any"


def targeted(url: str, target: str) -> str:
    """`url` with `target_session_attrs=target` when it lists several hosts and names no
    target of its own; else `url` unchanged."""
    match = _URL.match(url)
    if match is None or len(hosts(url)) < 2:
        return url
    query = (match["query"] or "")[1:]
    if TARGET in parse_qs(query):
        return url
    query = f"{query}&{TARGET}={target}" if query else f"{TARGET}={target}"
    return (f"{match['scheme']}://{match['netloc']}{match['path']}?{query}"
            f"{match['fragment'] or ''}")


def described(url: str) -> str:
    """Where a URL points and as whom, without its password: `user@db1:5432,db2:5432/name`
    (a libpq `key=value` string is not described: it may hold a password anywhere)."""
    match = _URL.match(url)
    if match is None:
        return "the configured database"
    user = unquote(match["netloc"].rpartition("@")[0].partition(":")[0])
    where = ",".join(hosts(url)) or "localhost"
    return f"{user + '@' if user else ''}{where}{match['path'] or '/'}"
