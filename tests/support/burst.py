"""A burst of writes and a stream of reads against a live service, from threads, every
answer recorded (when it was sent, what it was, its status, how long it took): what the
failover drills count afterwards."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx

from tests.support.stac import make_item

#: Answers a writer takes as "not now": it sends the same write again a moment later.
RETRIED = (503,)


@dataclass(frozen=True)
class Answer:
    sent: float  # time.monotonic() when sent
    kind: str  # "item", "job", "catalog", "read"
    key: str  # the item's id, the job's message, the read's path
    status: int  # 0: no answer at all (the connection failed)
    seconds: float
    location: str = ""  # a job's URL


@dataclass
class Burst:
    """`items` item POSTs to `collection`, `jobs` echo jobs and `catalogs` catalog POSTs
    (spread among the items), from `writers` threads, each write sent again after a 503
    until it is answered otherwise; `readers` threads read `read_paths` in turn until the
    burst ends."""

    base: str
    data_token: str
    process_token: str
    collection: str
    items: int = 2000
    jobs: int = 200
    catalogs: int = 100
    writers: int = 8
    readers: int = 2
    read_paths: tuple[str, ...] = ()
    prefix: str = "burst"
    answers: list[Answer] = field(default_factory=list)
    _work: Iterator[tuple[str, str]] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _writing: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _sending: dict[str, str] = field(default_factory=dict)  # thread name: its write

    def work(self) -> Iterator[tuple[str, str]]:
        others = {kind: (max(1, self.items // max(1, count)), iter(range(count)))
                  for kind, count in (("job", self.jobs), ("catalog", self.catalogs))}
        for n in range(self.items):
            yield "item", f"{self.prefix}-{n}"
            for kind, (every, left) in others.items():
                if n % every == every - 1 and (m := next(left, None)) is not None:
                    yield kind, f"{self.prefix}-{kind}-{m}"
        for kind, (_, left) in others.items():
            for m in left:
                yield kind, f"{self.prefix}-{kind}-{m}"

    def start(self) -> None:
        self._work = self.work()
        self._writing.set()
        # daemons: a drill failed on a lost answer does not hold pytest's exit
        writers = [threading.Thread(target=self._write, daemon=True)
                   for _ in range(self.writers)]
        readers = [threading.Thread(target=self._read, args=(n,), daemon=True)
                   for n in range(self.readers)]
        self._threads = writers + readers
        for thread in self._threads:
            thread.start()
        self._writers = writers

    def join(self, patience: float = 600) -> None:
        """Wait for every write's answer. A write still unanswered after `patience`
        seconds (a service that lost a request: no drill takes a tenth of that) fails
        the drill instead of holding the run."""
        deadline = time.monotonic() + patience
        for thread in self._writers:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._writing.clear()
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        waiting = [self._sending.get(thread.name, thread.name) for thread in self._threads
                   if thread.is_alive()]
        assert not waiting, f"no answer within {patience:.0f} s to {waiting}"

    def acknowledged(self, kind: str) -> list[Answer]:
        """The writes of `kind` answered 2xx."""
        return [a for a in self.answers if a.kind == kind and 200 <= a.status < 300]

    def _next(self) -> tuple[str, str] | None:
        with self._lock:
            assert self._work is not None
            return next(self._work, None)

    def _write(self) -> None:
        with httpx.Client(base_url=self.base, timeout=None) as client:
            while (write := self._next()) is not None:
                kind, key = write
                while True:
                    answer = self._send(client, kind, key)
                    if answer.status not in RETRIED and answer.status != 0:
                        break
                    time.sleep(0.2)

    def _send(self, client: httpx.Client, kind: str, key: str) -> Answer:
        if kind == "item":
            url, body = f"/data/collections/{self.collection}/items", make_item(key)
            token = self.data_token
        elif kind == "catalog":
            url, token = "/data/catalogs", self.data_token
            body = {"id": key, "type": "Catalog", "description": "written in a burst"}
        else:
            url, token = "/processes/processes/echo/execution", self.process_token
            body = {"processInputs": {"message": key}}
        self._sending[threading.current_thread().name] = f"{kind} {key}"
        sent = time.monotonic()
        try:
            r = client.post(url, json=body, headers={"Authorization": f"Bearer {token}"})
            status, location = r.status_code, r.headers.get("location", "")
        except httpx.TransportError:
            status, location = 0, ""
        answer = Answer(sent, kind, key, status, time.monotonic() - sent, location)
        self.answers.append(answer)
        return answer

    def _read(self, n: int) -> None:
        paths = itertools.cycle(self.read_paths[n:] + self.read_paths[:n])
        with httpx.Client(base_url=self.base, timeout=None) as client:
            while self._writing.is_set():
                path = next(paths)
                sent = time.monotonic()
                try:
                    status = client.get(path).status_code
                except httpx.TransportError:
                    status = 0
                self.answers.append(Answer(sent, "read", path, status,
                                           time.monotonic() - sent))
