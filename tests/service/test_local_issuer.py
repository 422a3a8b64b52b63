"""The development issuer: on when no identity provider is configured, off otherwise."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.stac import make_item


async def test_local_issuer_session(service_app, collection: str, tmp_path, caplog) -> None:
    async with service_app(oidc_issuer=None, jwks_url=None,
                           geocatalog_data_dir=tmp_path) as service:
        assert "DEVELOPMENT TOKEN ISSUER" in caplog.text
        key_file = tmp_path / "issuer-key.json"
        assert oct(key_file.stat().st_mode)[-3:] == "600"

        out = subprocess.run(
            [sys.executable, "-m", "stac_ext.cli", "token", "dev-user", "--group", "lab",
             "--right", "updateCatalog", "--ttl", "600"],
            env={**os.environ, "GEOCATALOG_DATA_DIR": str(tmp_path), "OIDC_ISSUER": "",
                 "JWKS_URL": ""}, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        token = out.stdout.strip()

        c = service.client(base_url="http://t")
        discovery = (await c.get("/auth/.well-known/openid-configuration")).json()
        assert discovery["issuer"] == "http://127.0.0.1:8080/auth"
        keys = (await c.get("/auth/jwks")).json()["keys"]
        assert keys and "d" not in keys[0]  # public part only
        r = await c.post(f"/data/collections/{collection}/items", json=make_item("dev"),
                         headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 201, r.text
        assert r.json()["properties"]["owner"] == "dev-user"


def test_token_command_refuses_when_a_provider_is_set(tmp_path) -> None:
    out = subprocess.run([sys.executable, "-m", "stac_ext.cli", "token", "x"],
                         env={**os.environ, "GEOCATALOG_DATA_DIR": str(tmp_path),
                              "OIDC_ISSUER": "https://idp.example/realms/x"},
                         capture_output=True, text=True)
    assert out.returncode == 1 and "identity provider" in out.stderr


def _start_issuer(key_file: str, ready: Any) -> str:
    from stac_ext.platform.auth.local_issuer import LocalIssuer

    ready.wait()  # every process creates its issuer at the same moment
    return LocalIssuer(Path(key_file), "http://127.0.0.1:8080/auth").public_keys.as_dict(
        )["keys"][0]["n"]


@pytest.mark.slow
def test_processes_starting_together_share_one_key(tmp_path: Path) -> None:
    """Two API processes (or the API and `geocatalog token`) on a fresh data dir: one key
    is made, both use it; neither fails because the other made it first."""
    context = multiprocessing.get_context("spawn")
    for attempt in range(5):
        key_file = tmp_path / f"attempt-{attempt}" / "issuer-key.json"
        with context.Manager() as manager, context.Pool(4) as pool:
            ready = manager.Barrier(4)
            moduli = pool.starmap(_start_issuer, [(str(key_file), ready)] * 4)
        assert len(set(moduli)) == 1
        assert oct(key_file.stat().st_mode)[-3:] == "600"
        assert [p.name for p in key_file.parent.iterdir()] == ["issuer-key.json"]
