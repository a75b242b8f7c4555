"""Which webhook URLs are sent to (docs/reference.md#webhook-urls): every resolved address
must be public, IPv4 carried inside IPv6 is judged as IPv4, the metadata addresses are
refused by name, ``http://`` and loopback only with the local setting, which Lambda
ignores; the delivery connects to the checked address with the name as ``Host``."""

from __future__ import annotations

import ipaddress

import pytest

from chalicelib.errors import WebhookUrlRefused
from chalicelib.services.webhooks.delivery import backoff
from chalicelib.services.webhooks.urls import refusal, resolve_target
from chalicelib.settings import Settings
from chalicelib.storage.webhook_http import host_header, pinned_url

REFUSED = [
    "127.0.0.1", "127.8.9.10", "::1", "10.0.0.1", "172.31.255.255", "192.168.1.1",
    "169.254.169.254", "169.254.170.2", "169.254.1.1", "fd00:ec2::254", "fe80::1",
    "fc00::5", "0.0.0.0", "::", "224.0.0.251", "ff02::1", "100.64.0.1", "240.0.0.1",
    "255.255.255.255", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "2002:a00:1::",
    "64:ff9b::a00:1", "2001:0:4136:e378:8000:63bf:f5ff:fffe", "198.18.0.1", "192.0.2.1",
]  # fmt: skip
"""Addresses no delivery may reach (6to4 of 10.0.0.1, NAT64 of 10.0.0.1, Teredo of
10.0.0.1 included)."""
PUBLIC = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.216.34"]


@pytest.mark.parametrize("text", REFUSED)
def test_non_public_addresses_are_refused(text: str) -> None:
    assert refusal(ipaddress.ip_address(text)) is not None, text


@pytest.mark.parametrize("text", PUBLIC)
def test_public_addresses_are_allowed(text: str) -> None:
    assert refusal(ipaddress.ip_address(text)) is None


def test_the_local_setting_allows_loopback_and_nothing_else() -> None:
    assert refusal(ipaddress.ip_address("127.0.0.1"), allow_loopback=True) is None
    assert refusal(ipaddress.ip_address("::ffff:127.0.0.1"), allow_loopback=True) is None
    for text in ("10.0.0.1", "169.254.169.254", "fd00:ec2::254", "0.0.0.0"):
        assert refusal(ipaddress.ip_address(text), allow_loopback=True) is not None


def test_every_resolved_address_must_be_public() -> None:
    def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "10.0.0.7"]

    with pytest.raises(WebhookUrlRefused, match="private"):
        resolve_target("https://hooks.example.com/in", resolver)
    target = resolve_target("https://hooks.example.com:8443/in?x=1", lambda h, p: ["8.8.8.8"])
    assert (target.host, target.port, target.address) == ("hooks.example.com", 8443, "8.8.8.8")
    assert pinned_url(target) == "https://8.8.8.8:8443/in?x=1"
    assert host_header(target) == "hooks.example.com:8443"
    v6 = resolve_target("https://hooks.example.com/", lambda h, p: ["2606:4700:4700::1111"])
    assert pinned_url(v6) == "https://[2606:4700:4700::1111]:443/"
    assert host_header(v6) == "hooks.example.com"


def test_http_is_loopback_only_and_only_with_the_setting() -> None:
    with pytest.raises(WebhookUrlRefused, match="https"):
        resolve_target("http://127.0.0.1:9/x", lambda h, p: [])
    with pytest.raises(WebhookUrlRefused, match="loopback only"):
        resolve_target("http://hooks.example.com/x", lambda h, p: ["8.8.8.8"], allow_loopback=True)
    assert resolve_target("http://localhost:9/x", lambda h, p: ["127.0.0.1"], allow_loopback=True)


def test_lambda_ignores_the_local_setting() -> None:
    local = Settings.from_env({"PINEWORK_WEBHOOKS_ALLOW_LOOPBACK": "1"})
    assert local.webhooks_allow_loopback is True
    assert Settings.from_env({}).webhooks_allow_loopback is False
    deployed = Settings.from_env(
        {"PINEWORK_WEBHOOKS_ALLOW_LOOPBACK": "1", "AWS_LAMBDA_FUNCTION_NAME": "pinework-api"}
    )
    assert deployed.webhooks_allow_loopback is False


def test_backoff_doubles_from_30_seconds_to_at_most_an_hour() -> None:
    waits = [backoff(n).total_seconds() for n in range(1, 10)]
    assert waits[:4] == [30, 60, 120, 240]
    assert max(waits) == 3600 and backoff(500).total_seconds() == 3600
