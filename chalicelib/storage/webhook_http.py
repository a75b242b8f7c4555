"""Sending one webhook delivery over HTTP (docs/reference.md#webhook-deliveries): httpx,
connected to the address the URL check chose (``services/webhooks/urls.py``'s
``Target.address``; no second DNS lookup), with the URL's host name as ``Host`` and TLS
SNI (the certificate is checked against the name), no redirects followed, no proxy from
the environment, a short timeout and at most ``MAX_RESPONSE_BYTES`` of the answer read."""

from __future__ import annotations

import ipaddress
import ssl
import time
from urllib.parse import urlsplit, urlunsplit

import httpx

from chalicelib.services.webhooks.delivery import SendResult
from chalicelib.services.webhooks.urls import Target

MAX_RESPONSE_BYTES = 4096
"""The most of a receiver's answer read (and the most of it kept: 200 characters)."""
CONNECT_TIMEOUT_SECONDS = 3.0
TIMEOUT_SECONDS = 5.0
"""Each of connect, write and read; the whole attempt is also cut at this plus connect."""


def pinned_url(target: Target) -> str:
    """The target's URL with its host replaced by the checked address (IPv6 in brackets)."""
    parts = urlsplit(target.url)
    address = ipaddress.ip_address(target.address)
    host = f"[{address}]" if address.version == 6 else str(address)
    return urlunsplit((parts.scheme, f"{host}:{target.port}", parts.path or "/", parts.query, ""))


def host_header(target: Target) -> str:
    """The ``Host`` header: the URL's name, with its port when not the scheme's default."""
    default = 443 if target.scheme == "https" else 80
    name = f"[{target.host}]" if ":" in target.host else target.host
    return name if target.port == default else f"{name}:{target.port}"


class HttpxSender:
    """Sends deliveries with httpx (one connection per attempt).

    Args:
        verify: the TLS trust (httpx's ``verify``): certifi's roots by default; tests
            pass a context that trusts their own certificate authority.
    """

    def __init__(self, verify: ssl.SSLContext | bool = True) -> None:
        self._verify = verify

    def send(self, target: Target, headers: dict[str, str], body: bytes) -> SendResult:
        """POST ``body`` to ``target``; a 2xx answer is a success, anything else (a
        redirect included, never followed) or no answer in time a failure.

        Returns:
            ``SendResult``: status (None without an answer), milliseconds, error text.
        """
        started = time.monotonic()
        limit = CONNECT_TIMEOUT_SECONDS + TIMEOUT_SECONDS
        timeout = httpx.Timeout(TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS)
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        sent = {**headers, "host": host_header(target), "user-agent": "Pinework-Webhooks/1"}
        try:
            with (
                httpx.Client(
                    timeout=timeout, follow_redirects=False, trust_env=False, verify=self._verify
                ) as client,
                client.stream(
                    "POST", pinned_url(target), content=body, headers=sent, extensions=extensions
                ) as response,
            ):
                read = 0
                for chunk in response.iter_raw():
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BYTES or time.monotonic() - started > limit:
                        break
                status = response.status_code
        except httpx.HTTPError as error:
            elapsed = round((time.monotonic() - started) * 1000)
            return SendResult(None, elapsed, f"{type(error).__name__}: {error}"[:200])
        elapsed = round((time.monotonic() - started) * 1000)
        if 200 <= status < 300:
            return SendResult(status, elapsed, None)
        why = "a redirect (not followed)" if 300 <= status < 400 else "not a 2xx answer"
        return SendResult(status, elapsed, f"HTTP {status}: {why}")
