"""Items as the read endpoints serve them, already encoded, by the text pgstac sent them in.

Rendering an item (decoding, hydrating, its links, generated content, encoding) is most of
the API's CPU on a page, and the same items are served again and again (pages of a
collection, overlapping searches, the item pages of a browser). An item's answer is a
function of its stored text alone (pgstac sends its base item within it) and of the API
root its links start from; keyed by both, an entry cannot go stale: a write through the
API or `geocatalog load`, or a collection change that reaches the item, gives it another
text, so another key, and the old entry ages out.

The bodies are written one after the other into one buffer of the budget's size, the
oldest overwritten first: kept as separate objects, freed and allocated again as entries
come and go, they made the heap grow to two to four times the budget. The text is kept as
its SHA-256 digest. Imports orjson and the standard library, nothing of
the project: the read client decides what is rendered and kept.
"""

from __future__ import annotations

import hashlib
import mmap
from collections import deque
from typing import NewType

import orjson

#: An item's API root and text, digested.
Key = NewType("Key", tuple[str, bytes])


class RenderedItems:
    """Encoded items by `key(base_url, text)`, first in first out, in `budget` bytes (the
    index of the entries adds about 330 bytes an item, as tracemalloc counts it)."""

    def __init__(self, budget: int) -> None:
        # anonymous memory: resident only once written (a bytearray is zeroed at once)
        self._buffer = mmap.mmap(-1, max(budget, 1))
        self._spans: dict[Key, tuple[int, int]] = {}
        #: (start, key) of every entry, oldest first: after the write position, then from
        #: the buffer's start (the entries written since the last wrap)
        self._order: deque[tuple[int, Key]] = deque()
        self._head = 0
        #: what an operator watches (`state`): reads answered and not, bytes held
        self.hits = self.misses = self.bytes = 0

    def __len__(self) -> int:
        return len(self._spans)

    def state(self) -> dict[str, int]:
        """Reads answered (hits) and not (misses) so far, bytes and entries held."""
        return {"hits": self.hits, "misses": self.misses, "bytes": self.bytes,
                "entries": len(self._spans)}

    @staticmethod
    def key(base_url: str, text: str) -> Key:
        return Key((base_url, hashlib.sha256(text.encode()).digest()))

    def get(self, key: Key) -> orjson.Fragment | None:
        span = self._spans.get(key)
        if span is None:
            self.misses += 1
            return None
        self.hits += 1
        return orjson.Fragment(self._buffer[span[0]:span[1]])

    def put(self, key: Key, body: bytes) -> orjson.Fragment:
        """The body as a fragment of a larger document, kept when it fits the buffer."""
        fragment = orjson.Fragment(body)
        if len(body) > len(self._buffer) or key in self._spans:
            return fragment
        if self._head + len(body) > len(self._buffer):
            self._drop_from(self._head, len(self._buffer))  # the end is left unused
            self._head = 0
        start, end = self._head, self._head + len(body)
        self._drop_from(start, end)
        self._buffer[start:end] = body
        self._spans[key] = (start, end)
        self.bytes += end - start
        self._order.append((start, key))
        self._head = end
        return fragment

    def _drop_from(self, start: int, end: int) -> None:
        """Forget the oldest entries while they start within [start, end)."""
        while self._order and start <= self._order[0][0] < end:
            first, last = self._spans.pop(self._order.popleft()[1])
            self.bytes -= last - first
