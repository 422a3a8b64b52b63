"""Bearer tokens: real signatures, JWKS fetched over HTTP from the test issuer."""

from __future__ import annotations

import asyncio
import base64
import json
import time

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey, RSAKey

from stac_ext.platform.auth.authenticator import Authenticator, Unauthenticated
from stac_ext.platform.auth.keys import StaticKeys
from stac_ext.platform.auth.principal import Principal
from tests.support.http import http_client
from tests.support.issuer import TestIssuer
from tests.support.stac import make_item


def b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def bad_tokens(issuer: TestIssuer) -> dict[str, str]:
    now = int(time.time())
    claims = issuer.claims("mallory")
    other_key = RSAKey.generate_key(2048, parameters={"kid": issuer.key.kid}, private=True)
    public_as_secret = OctKey.import_key(json.dumps(issuer.key.as_dict(private=False)).encode())
    return {
        "malformed": "not-a-jwt",
        "garbage segments": "abc.def.ghi",
        "expired": issuer.sign({**claims, "exp": now - 120, "iat": now - 700}),
        "not yet valid": issuer.sign({**claims, "nbf": now + 600}),
        "wrong signature": issuer.sign(claims, key=other_key),
        "alg none": f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64(claims)}.",
        "HS256 with the public key": jwt.encode(
            {"alg": "HS256", "kid": issuer.key.kid}, claims, public_as_secret,
            algorithms=["HS256"]),
        "other issuer": issuer.sign({**claims, "iss": "https://evil.example/realms/x"}),
        "no exp": issuer.sign({k: v for k, v in claims.items() if k != "exp"}),
        "no user": issuer.sign({k: v for k, v in claims.items() if k != "preferred_username"}),
    }


@pytest.mark.parametrize("case", [
    "malformed", "garbage segments", "expired", "not yet valid", "wrong signature",
    "alg none", "HS256 with the public key", "other issuer", "no exp", "no user",
])
async def test_bad_tokens_are_401(app, issuer: TestIssuer, collection: str, case: str):
    token = bad_tokens(issuer)[case]
    async with http_client(app, token) as c:
        r = await c.post(f"/data/collections/{collection}/items", json=make_item("x"))
    assert r.status_code == 401, r.text
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert r.json()["code"] and r.json()["description"]


async def test_missing_token_is_401(anon: httpx.AsyncClient, collection: str) -> None:
    r = await anon.post(f"/data/collections/{collection}/items", json=make_item("x"))
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"] == "Bearer"
    r = await anon.post(f"/data/collections/{collection}/items", json=make_item("x"),
                        headers={"Authorization": "Basic YWxpY2U6cHc="})
    assert r.status_code == 401


async def test_token_of_another_client_is_403(app, issuer: TestIssuer, collection: str):
    async with http_client(app, issuer.token("alice", client="geocatalog-processes")) as c:
        r = await c.post(f"/data/collections/{collection}/items", json=make_item("x"))
    assert r.status_code == 403
    assert "geocatalog" in r.json()["description"]


async def test_audience_stands_for_client_without_azp(app, issuer, collection: str):
    claims = issuer.claims("alice")
    del claims["azp"]
    claims["aud"] = ["account", "geocatalog"]
    async with http_client(app, issuer.sign(claims)) as c:
        r = await c.post(f"/data/collections/{collection}/items", json=make_item("aud"))
    assert r.status_code == 201, r.text


async def test_rotated_key_is_fetched_once_more(app, issuer: TestIssuer, collection: str):
    async with http_client(app, issuer.token("alice")) as c:
        assert (await c.post(f"/data/collections/{collection}/items",
                             json=make_item("before"))).status_code == 201
    fetched = issuer.jwks_requests
    old_key = issuer.key
    issuer.rotate()
    try:
        app.state.auth.authenticator._keys._fetched_at = 0  # past the refresh back-off
        async with http_client(app, issuer.token("alice")) as c:
            r = await c.post(f"/data/collections/{collection}/items", json=make_item("after"))
        assert r.status_code == 201, r.text
        assert issuer.jwks_requests == fetched + 1
        # the old key is no longer published: its tokens are refused
        async with http_client(app, issuer.sign(issuer.claims("alice"), key=old_key)) as c:
            r = await c.post(f"/data/collections/{collection}/items", json=make_item("old"))
        assert r.status_code == 401
    finally:
        issuer.key = old_key
        app.state.auth.authenticator._keys._fetched_at = 0


async def test_collection_writes_need_the_admin_right(
    alice_data: httpx.AsyncClient, admin_data: httpx.AsyncClient, app, issuer: TestIssuer
) -> None:
    body = {"type": "Collection", "id": "test_conv-governed", "description": "d",
            "license": "CC-BY-4.0", "links": [], "stac_version": "1.0.0",
            "extent": {"spatial": {"bbox": [[-10, -10, 10, 10]]},
                       "temporal": {"interval": [["2020-01-01T00:00:00Z", None]]}}}
    r = await alice_data.post("/data/collections", json=body)
    assert (r.status_code, r.json()) == (403, {
        "code": "Forbidden", "description": "Only an administrator may change collections."})
    # the right given for our client (resource_access) counts as well as a realm role
    claims = issuer.claims("carol")
    claims["resource_access"] = {"geocatalog": {"roles": ["manageCollections"]}}
    async with http_client(app, issuer.sign(claims)) as carol:
        assert (await carol.post("/data/collections", json=body)).status_code == 201
        assert (await alice_data.delete("/data/collections/test_conv-governed")).status_code == 403
        assert (await carol.delete("/data/collections/test_conv-governed")).status_code == 200


def test_principal_reads_keycloak_claims() -> None:
    principal = Principal.from_claims({
        "preferred_username": "alice", "azp": "geocatalog",
        "groups": ["/project-a", "project-b", 7],
        "realm_access": {"roles": ["updateCatalog"]},
        "resource_access": {"geocatalog": {"roles": ["manageCollections"]},
                            "other": {"roles": ["x"]}, "broken": "nope"},
    })
    assert principal.username == "alice"
    assert principal.clients == {"geocatalog"}
    assert principal.groups == {"project-a", "project-b"}
    assert principal.rights_for("geocatalog") == {"updateCatalog", "manageCollections"}
    assert principal.rights_for("geocatalog-processes") == {"updateCatalog"}


@pytest.mark.slow
async def test_a_verified_token_is_checked_again_on_every_use(issuer: TestIssuer) -> None:
    """The signature of a token is verified once (cached by the whole token); its claims
    are not: a cached token that expires is refused like any expired token."""
    authenticator = Authenticator(StaticKeys(KeySet([issuer.key])), issuer.url, leeway=0)
    token = issuer.token("alice", ttl=2)
    assert (await authenticator.authenticate(token)).username == "alice"
    assert (await authenticator.authenticate(token)).username == "alice"  # from the cache
    deadline = time.monotonic() + 30
    expires = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))["exp"]
    while time.time() < expires + 1 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    with pytest.raises(Unauthenticated, match="expired"):
        await authenticator.authenticate(token)
    tampered = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    with pytest.raises(Unauthenticated):  # another token: verified, not found in the cache
        await authenticator.authenticate(tampered)
