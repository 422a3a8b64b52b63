"""The data API's pools connect to a cluster's URL by trying every host at once: a member
that takes the connection but never answers (a frozen server, a lost machine's silent
address) holds nothing up; one that refuses neither."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import asyncpg
import pytest

from stac_ext.platform.database.cluster_connect import connect
from tests.support.http import free_port


@pytest.fixture
def frozen() -> Iterator[int]:
    """A port whose listener takes connections and never says a word."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


def _cluster(database_url: str, *ports: int, target: str) -> str:
    url = urlsplit(database_url)
    hosts = ",".join(f"127.0.0.1:{port}" for port in ports)
    return (f"postgresql://{url.username}:{url.password}@{hosts}{url.path}"
            f"?target_session_attrs={target}")


async def test_a_silent_member_first_in_the_url_holds_nothing_up(database_url: str,
                                                                frozen: int) -> None:
    real = urlsplit(database_url).port or 5432
    # asyncpg alone spends its whole timeout on the silent host and never tries the next
    with pytest.raises(TimeoutError):
        await asyncpg.connect(_cluster(database_url, frozen, real, target="read-write"),
                              timeout=2)
    conn = await connect(_cluster(database_url, frozen, real, target="read-write"),
                         timeout=2)
    try:
        assert await conn.fetchval("SELECT NOT pg_is_in_recovery()") is True
    finally:
        await conn.close()
    pool = await asyncpg.create_pool(_cluster(database_url, frozen, free_port(), real,
                                              target="read-write"),
                                     min_size=2, max_size=2, timeout=2, connect=connect)
    try:
        assert await pool.fetchval("SELECT 1") == 1
    finally:
        await pool.close()


async def test_a_standby_is_preferred_where_one_answers_else_the_primary(
        database_url: str, frozen: int) -> None:
    real = urlsplit(database_url).port or 5432
    conn = await connect(_cluster(database_url, frozen, real, target="prefer-standby"),
                         timeout=2)
    try:  # the test cluster has no standby: its primary serves
        assert await conn.fetchval("SELECT pg_is_in_recovery()") is False
    finally:
        await conn.close()
    with pytest.raises(asyncpg.exceptions.TargetServerAttributeNotMatched):
        await connect(_cluster(database_url, real, real, target="standby"), timeout=2)


async def test_a_cluster_that_refuses_everywhere_is_an_os_error(database_url: str) -> None:
    with pytest.raises(OSError):
        await connect(_cluster(database_url, free_port(), free_port(), target="read-write"),
                      timeout=2)
