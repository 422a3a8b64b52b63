"""The hrefs a write may store: what browsers and clients open when they follow them.

http(s), relative, or object storage (`s3://`, `gs://`, `az://`, ...: assets live there,
and so may a notebook an example link names). Anything else (`javascript:`, `data:`,
`file:`) is refused: STAC Browser and our pages render stored hrefs as links. An item's
geometry is stored as its shape alone (members beside type and coordinates are dropped),
so it is not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

WEB = frozenset({"http", "https"})
OBJECT_STORAGE = frozenset({"s3", "gs", "gcs", "az", "abfs", "abfss"})
ALLOWED = WEB | OBJECT_STORAGE
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
# what browsers drop before they read a scheme: tabs and newlines anywhere, C0 controls
# and spaces around
_IGNORED = str.maketrans("", "", "\t\n\r")


def scheme(href: str) -> str | None:
    """The scheme a browser would see in `href` (lower case), or None when relative."""
    match = _SCHEME.match(href.translate(_IGNORED).strip("\x00\x01\x02\x03\x04\x05\x06\x07"
                                                         "\x08\x0b\x0c\x0e\x0f\x10\x11\x12"
                                                         "\x13\x14\x15\x16\x17\x18\x19\x1a"
                                                         "\x1b\x1c\x1d\x1e\x1f "))
    return match.group(1).lower() if match else None


def _hrefs(document: Any) -> Iterator[tuple[str, str]]:
    """(where, href) of every href and provider URL, without recursion."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(document, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                where = (*path, str(key))
                if isinstance(value, str) and (key == "href" or (
                        key == "url" and "providers" in path)):
                    yield ".".join(where), value
                elif not (key == "geometry" and not path):  # stored as its shape alone
                    stack.append((value, where))
        elif isinstance(node, list):
            stack.extend((value, (*path, str(n))) for n, value in enumerate(node))


# An href or url member (as orjson writes it: keys unescaped, and a quote inside a string
# always escaped, so this only matches members) whose value is not plainly allowed: an
# allowed scheme, or a relative reference with nothing escaped in it (no control characters
# a browser would drop to find a scheme) that does not start with a scheme.
_SUSPECT = re.compile(
    rb'"(?:href|url)":"(?!(?i:' + "|".join(sorted(ALLOWED)).encode() + rb'):'
    rb'|(?![A-Za-z][A-Za-z0-9+.-]*:)[A-Za-z0-9._~/?#%-][^"\\]*")')


def _suspects(document: Any) -> bool:
    """Whether any href or url may not be allowed: read in the document's JSON text, as
    most documents (a bulk load's million) have none and need no walk."""
    try:
        return _SUSPECT.search(orjson.dumps(document)) is not None
    except TypeError:  # not JSON orjson writes (an integer beyond 64 bits)
        return True


def href_problem(document: Any) -> str | None:
    """What is wrong with the first href a browser should not follow, or None."""
    if not _suspects(document):
        return None
    for where, href in _hrefs(document):
        found = scheme(href)
        if found is not None and found not in ALLOWED:
            return (f"{where}: a `{found}:` address is not allowed (http(s), object "
                    "storage such as s3://, or a relative address).")
    return None
