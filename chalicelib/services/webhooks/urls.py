"""Which webhook URLs Pinework sends to (docs/reference.md#webhook-urls,
docs/issues.md#issue-47): HTTPS only, and a host whose every resolved address is public
(never loopback, private, link-local, multicast, reserved, unspecified, shared or a cloud
metadata address, an IPv4 address inside IPv6 included). Checked at registration and
again at every delivery, after resolution: the delivery connects to the address checked
here (``Target.address``), never resolving the name a second time.

The local server may allow ``http://`` and loopback receivers for development
(``PINEWORK_WEBHOOKS_ALLOW_LOOPBACK``, off by default, never on Lambda); every other
rule still holds.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from chalicelib.errors import WebhookUrlRefused

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]
"""A host name and port -> its addresses (text), as ``getaddrinfo`` finds them."""

METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("169.254.170.2"),
        ipaddress.ip_address("fd00:ec2::254"),
    }
)
"""Cloud instance and container metadata services (EC2 IMDS over IPv4 and IPv6, ECS task
metadata): refused by name even though the ranges they sit in are refused too."""
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses by the system's resolver (``socket.getaddrinfo``, TCP).

    Raises:
        WebhookUrlRefused: the name does not resolve.
    """
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise WebhookUrlRefused(f"The webhook URL's host {host!r} does not resolve.") from error
    return [str(entry[4][0]) for entry in found]


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal(address: IpAddress, *, allow_loopback: bool = False) -> str | None:
    """Why Pinework never sends to ``address`` (a short phrase), or None when it may.

    Refused: loopback (unless ``allow_loopback``), private, link-local, multicast,
    reserved, unspecified, shared (100.64/10) and every other non-global range, the
    metadata addresses, and an IPv6 address carrying any of those as IPv4."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            return refusal(inner, allow_loopback=allow_loopback)
    checks = (
        (address in METADATA_ADDRESSES, "a cloud metadata address"),
        (address.is_loopback and not allow_loopback, "a loopback address"),
        (address.is_unspecified, "an unspecified address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_private and not address.is_loopback, "a private address"),
        (address.is_reserved, "a reserved address"),
        (not address.is_global and not address.is_loopback, "a non-public address"),
    )
    for refused, why in checks:
        if refused:
            return why
    return None


@dataclass(frozen=True)
class Target:
    """Where a delivery goes: the URL as registered, its host name and port, and the
    one checked address to connect to (the name is still sent as Host and TLS SNI)."""

    url: str
    scheme: str
    host: str
    port: int
    address: str


def parse_url(url: str, *, allow_loopback: bool = False) -> tuple[str, str, int]:
    """The scheme, host and port of a webhook URL, its form checked: ``https://`` (or
    ``http://`` with ``allow_loopback``), a host, no user name or password, no fragment.

    Raises:
        WebhookUrlRefused: the URL breaks one of these rules.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise WebhookUrlRefused(f"The webhook URL is not a URL ({error}).") from error
    allowed = ("https", "http") if allow_loopback else ("https",)
    if parts.scheme not in allowed:
        raise WebhookUrlRefused("A webhook URL must start with https://.")
    if not parts.hostname:
        raise WebhookUrlRefused("The webhook URL has no host.")
    if parts.username is not None or parts.password is not None:
        raise WebhookUrlRefused("A webhook URL may not hold a user name or password.")
    if parts.fragment:
        raise WebhookUrlRefused("A webhook URL may not have a #fragment.")
    if any(ord(character) < 33 for character in url):
        raise WebhookUrlRefused("A webhook URL may not hold spaces or control characters.")
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, parts.hostname, port or default


def resolve_target(url: str, resolver: Resolver, *, allow_loopback: bool = False) -> Target:
    """Check ``url`` and resolve its host once: every address it resolves to must be
    allowed (``refusal``), and an ``http://`` URL must resolve to loopback only.

    Returns:
        ``Target`` with the first address to connect to.

    Raises:
        WebhookUrlRefused: a rule is broken, or the host does not resolve.
    """
    scheme, host, port = parse_url(url, allow_loopback=allow_loopback)
    try:
        literal: IpAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    texts = [str(literal)] if literal is not None else resolver(host, port)
    if not texts:
        raise WebhookUrlRefused(f"The webhook URL's host {host!r} does not resolve.")
    addresses: list[IpAddress] = []
    for text in texts:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        why = refusal(address, allow_loopback=allow_loopback)
        if why is not None:
            raise WebhookUrlRefused(
                f"The webhook URL's host {host!r} resolves to {why}: Pinework sends only "
                "to public addresses."
            )
        addresses.append(address)
    if scheme == "http" and not all(address.is_loopback for address in addresses):
        raise WebhookUrlRefused(
            "A webhook URL must start with https:// (http:// is loopback only)."
        )
    return Target(url, scheme, host, port, str(addresses[0]))
