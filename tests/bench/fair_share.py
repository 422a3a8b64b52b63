"""Jobs in a burst from many users: `users` users each submit `per_user` echo jobs (async)
at once, each user on a connection of its own, to `geocatalog serve` with `geocatalog
worker` processes at the default quotas (one running job per user, a hundred queued).
Measured from the job records once the workers run jobs (each registered, and a first job
of each user run, not counted): the whole burst's time (the first job created to the last
finished), and fair share: each user's last job finished, since the first created, the
slowest user's against the fastest's (1.0: every user done together).

    python -m tests.bench.run --runs 0 --only geocatalog --no-cf --feature fair_share
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import psycopg

#: The burst's shape: users, and jobs each submits.
USERS, PER_USER = 10, 100
#: Of the records, per owner: the first created, the last finished, how each ended.
FINISHED = """
SELECT owner, min(created), max(finished), count(*) FILTER (WHERE status = 'successful'),
       count(*) FILTER (WHERE status <> 'successful')
FROM processes.jobs WHERE id = ANY(%s::uuid[]) GROUP BY owner ORDER BY owner
"""


def burst(dsn: str, base: str, tokens: list[str], workers: int, per_user: int = PER_USER
          ) -> dict[str, Any]:
    """The burst of `per_user` jobs from each of `tokens`' users, to the process API at
    `base`, waited for until every job is final; first the `workers` registered and a job
    of each user run, so that workers still starting are not what is measured."""
    return asyncio.run(_burst(dsn, base, tokens, workers, per_user))


async def _submit(base: str, token: str, count: int, ids: list[str], refused: list[int]
                  ) -> None:
    headers = {"Authorization": f"Bearer {token}", "Prefer": "respond-async"}
    async with aiohttp.ClientSession(headers=headers,
                                     connector=aiohttp.TCPConnector(limit=1)) as session:
        for n in range(count):
            async with session.post(f"{base}/processes/echo/execution",
                                    json={"inputs": {"message": f"job {n}"}}) as answer:
                if answer.status != 201:
                    refused.append(answer.status)
                    continue
                ids.append((await answer.json())["jobID"])


async def _final(conn: psycopg.AsyncConnection[Any], ids: list[str]) -> None:
    """Until every job of `ids` is final: a count every 50 ms (not the API's job list,
    which would load the machine being measured)."""
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        row = await (await conn.execute(
            "SELECT count(*) FROM processes.jobs WHERE id = ANY(%s::uuid[]) "
            "AND status IN ('successful', 'failed', 'dismissed')", (ids,))).fetchone()
        if row and row[0] >= len(ids):
            return
        await asyncio.sleep(0.05)


async def _burst(dsn: str, base: str, tokens: list[str], workers: int, per_user: int
                 ) -> dict[str, Any]:
    ids: list[str] = []
    refused: list[int] = []
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while (row := await (await conn.execute(
                "SELECT count(*) FROM procrastinate.procrastinate_workers")).fetchone()) \
                and row[0] < workers:
            await asyncio.sleep(0.1)
        first: list[str] = []
        await asyncio.gather(*(_submit(base, token, 1, first, refused) for token in tokens))
        await _final(conn, first)
        await asyncio.gather(*(_submit(base, token, per_user, ids, refused)
                               for token in tokens))
        await _final(conn, ids)
        rows = await (await conn.execute(FINISHED, (ids,))).fetchall()
    first = min(row[1] for row in rows)
    last_s = {row[0]: (row[2] - first).total_seconds() for row in rows if row[2]}
    return {
        "users": len(tokens), "per_user": per_user, "submitted": len(ids),
        "refused": len(refused),
        "successful": sum(row[3] for row in rows), "not_successful": sum(row[4] for row in rows),
        "all_done_s": round(max(last_s.values()), 2),
        "user_last_s": {owner: round(s, 2) for owner, s in last_s.items()},
        "fairness": round(max(last_s.values()) / min(last_s.values()), 3),
    }
