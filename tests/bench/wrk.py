"""Drive a server with wrk (a separate process): a fixed request list, closed loop."""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

SCRIPT = Path(__file__).with_name("load.lua")


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # relative to the STAC API root
    body: str = ""  # one line of JSON; `{{n}}` becomes a unique number


@dataclass(frozen=True)
class Figures:
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    errors: int  # every failure: error statuses, broken connections, timeouts
    status_errors: int = 0  # the answers (among `requests`) with an error status

    @property
    def ok_rps(self) -> float:
        """Successful answers per second."""
        return (self.requests - self.status_errors) / self.seconds

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def run(root: str, requests: list[Request], *, seconds: float, connections: int = 8,
        token: str = "", tag: str = "run") -> Figures:
    """Closed-loop load against `root` (the STAC API root URL) for `seconds`."""
    prefix = urlsplit(root).path
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as listing:
        for r in requests:
            listing.write(f"{r.method}\t{prefix}{r.path}\t{r.body}\n")
    threads = min(2, connections)
    out = subprocess.run(
        ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{max(1, round(seconds))}s",
         "--timeout", "30s", "-s", str(SCRIPT), root, "--", listing.name, token, tag,
         str(threads)],
        capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"wrk failed: {out.stderr.strip() or out.stdout.strip()}")
    Path(listing.name).unlink()
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("WRK_JSON "))
    raw = json.loads(line.removeprefix("WRK_JSON "))
    secs = raw["duration_us"] / 1e6
    return Figures(requests=raw["requests"], seconds=round(secs, 2),
                   rps=round(raw["requests"] / secs, 1), p50_ms=raw["p50_us"] / 1000,
                   p95_ms=raw["p95_us"] / 1000, p99_ms=raw["p99_us"] / 1000,
                   errors=raw["errors"], status_errors=raw["status_errors"])
