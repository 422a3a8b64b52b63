"""Who is calling: user name, clients, groups and rights from Keycloak-style token claims."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Principal:
    """The authenticated caller of one request."""

    username: str
    # the client it was issued to (`azp`) and those it is intended for (`aud`): a web
    # client's token names the data and process clients as audiences (docs/scientists/browser.md)
    clients: frozenset[str]
    groups: frozenset[str]
    realm_rights: frozenset[str]
    client_rights: Mapping[str, frozenset[str]]

    @classmethod
    def from_claims(cls, claims: Mapping[str, Any]) -> Principal:
        azp = claims.get("azp")
        resource_access = claims.get("resource_access")
        return cls(
            username=str(claims.get("preferred_username") or ""),
            clients=frozenset(([azp] if isinstance(azp, str) else [])
                              + _strings(claims.get("aud"))),
            groups=frozenset(g.lstrip("/") for g in _strings(claims.get("groups"))),
            realm_rights=frozenset(_strings(_get(claims.get("realm_access"), "roles"))),
            client_rights={
                str(client): frozenset(_strings(_get(access, "roles")))
                for client, access in (resource_access or {}).items()
            } if isinstance(resource_access, dict) else {},
        )

    def rights_for(self, client_id: str) -> frozenset[str]:
        """Realm rights plus the rights given for one client."""
        return self.realm_rights | self.client_rights.get(client_id, frozenset())


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []
