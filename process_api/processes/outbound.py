"""Where a process may send requests (user input names the targets: sources, S3
endpoints): public addresses only, checked after DNS resolution, unless `OUTBOUND_ALLOW`
(`OutboundSettings`: comma-separated networks, e.g. `10.0.0.0/8,127.0.0.1/32`) names
more. Clients that can (aiohttp's, under s3fs and fsspec) check the address of every
connection they open
(`allowed_socket`): a redirect, a region redirect or a DNS answer that changed cannot lead
them elsewhere. A refusal says one thing, whatever the target, so that it cannot map a
network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from stac_ext.platform.service.settings import CommaSeparated

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class OutboundSettings(BaseSettings):
    """Outbound connections of processes"""

    model_config = SettingsConfigDict(extra="ignore", use_attribute_docstrings=True)

    outbound_allow: CommaSeparated = Field(default_factory=list)
    """Private networks processes may reach, comma-separated (e.g. `10.0.0.0/8,127.0.0.1/32`);
    empty (the default): public addresses only. Every connection of a process, of the
    staging of a job's data and of a job's callback is checked at the address it connects
    to (`make run` allows 127.0.0.0/8, for `make demo-s3`)."""
REFUSED = ("The address cannot be reached from here: give a public http(s) or S3 address "
           "(the service's OUTBOUND_ALLOW names the private networks it may reach).")


#: Why a URL with a user name or password is refused wherever a request names one.
CREDENTIALS_REFUSED = ("the URL holds a user name or password, which the service never "
                       "sends nor keeps in a job's record: give a URL that needs none")


def has_credentials(url: str) -> bool:
    """Whether `url` holds a user name or password (`scheme://user:password@host`)."""
    try:
        found = urlsplit(url)
    except ValueError:  # no URL: the fetch says so
        return False
    return found.username is not None or found.password is not None


class TargetRefused(ValueError):
    def __init__(self) -> None:
        super().__init__(REFUSED)


def _blocked(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Loopback, private, link-local (cloud metadata: 169.254.169.254), and the like."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return (address.is_loopback or address.is_private or address.is_link_local
            or address.is_multicast or address.is_reserved or address.is_unspecified)


@dataclass(frozen=True)
class OutboundPolicy:
    allowed: tuple[Network, ...] = ()

    @classmethod
    def from_env(cls) -> OutboundPolicy:
        """The policy the environment sets (`OUTBOUND_ALLOW`, which jobs' processes get)."""
        return cls(tuple(ipaddress.ip_network(network, strict=False)
                         for network in OutboundSettings().outbound_allow))

    def allows(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return not _blocked(address) or any(address in net for net in self.allowed)

    def check(self, url: str) -> None:
        """TargetRefused unless every address the URL's host resolves to may be reached."""
        try:  # a malformed address (`https://[x`) raises as its parts are read
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port
        except ValueError:
            raise TargetRefused() from None
        if parts.scheme not in ("http", "https") or not host:
            raise TargetRefused()
        try:
            infos = socket.getaddrinfo(host, port or 443, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise TargetRefused() from None
        for info in infos:
            if not self.allows(ipaddress.ip_address(info[4][0])):
                raise TargetRefused()


async def check_reachable(url: str) -> None:
    """`OutboundPolicy.check` under OUTBOUND_ALLOW now, off the event loop (it resolves the
    host name): TargetRefused unless the URL may be reached."""
    await asyncio.to_thread(OutboundPolicy.from_env().check, url)


def allowed_socket(addr_info: tuple[Any, ...]) -> socket.socket:
    """aiohttp's `socket_factory`: a socket for a connection to an allowed address only
    (every connection: the first, and those of redirects)."""
    family, kind, proto, _, address = addr_info
    if not OutboundPolicy.from_env().allows(ipaddress.ip_address(address[0])):
        raise ConnectionRefusedError(REFUSED)
    return socket.socket(family, kind, proto)


async def allowed_http_client(**kwargs: Any) -> Any:
    """fsspec's HTTP filesystem's `get_client`: aiohttp, connecting to allowed addresses only."""
    import aiohttp

    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(socket_factory=allowed_socket), **kwargs)
