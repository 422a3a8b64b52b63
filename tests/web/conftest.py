"""The web tests' own service: the local development issuer, so that a test signs in as a
browser does (tests/support/sessions.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.support.sessions import no_cookies

#: Where the local issuer's service is addressed (its issuer's default address)
LOCAL_BASE = "http://127.0.0.1:8080"


@pytest.fixture
async def signing_in(service_app, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The service with its development issuer, at its own address; a client that keeps
    no cookie (each request carries only those the test gives it)."""
    async with service_app(oidc_issuer=None, geocatalog_data_dir=tmp_path) as service:
        yield service.client(base_url=LOCAL_BASE, cookies=no_cookies())
