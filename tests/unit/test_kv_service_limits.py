"""``KvService``'s quota, value-cap and paging rules without AWS (docs/reference.md#kv-quotas,
docs/reference.md#kv-listing): the storage is a ``Mock(spec=KvRepository)``, so these
check which quota each scope kind gets, how a refusal reads, and how pages are cut."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from unittest.mock import Mock

import pytest

from chalicelib.errors import InvalidRequest, KvQuotaExceeded, PayloadTooLarge, Unauthorized
from chalicelib.ids import FixedClock
from chalicelib.limits import (
    KV_ACCOUNT_MAX_BYTES,
    KV_ACCOUNT_MAX_KEYS,
    KV_ANON_MAX_BYTES,
    KV_ANON_MAX_KEYS,
    KV_ANON_VALUE_MAX_BYTES,
    KV_BYOK_MAX_BYTES,
    KV_BYOK_MAX_KEYS,
    KV_BYOK_NEW_SCOPES_PER_DAY,
    KV_PAGE_MAX_BYTES,
    VALUE_MAX_BYTES,
)
from chalicelib.services.kv.key_pages import decode_cursor, encode_cursor, page_size
from chalicelib.services.kv.service import KvLimits, KvScope, KvService, client_network
from chalicelib.storage.protocols import (
    KvNewScopes,
    KvNewScopesReached,
    KvQuota,
    KvQuotaReached,
    KvRepository,
    KvUsage,
)
from tests.helpers import START

ANON = KvScope("anon", "a" * 64)
BYOK = KvScope("byok", "b" * 64)
ACCOUNT = KvScope("account", "wsp_1")


class NoSecrets:
    def find_secret(self, text: str, *, shapes_only: bool = False) -> str | None:
        return None


def service(
    entries: Any, limits: KvLimits | None = None, clock: FixedClock | None = None
) -> KvService:
    return KvService(entries, NoSecrets(), clock or FixedClock(START), limits)


@pytest.mark.parametrize(
    ("scope", "quota"),
    [
        (ANON, KvQuota(KV_ANON_MAX_KEYS, KV_ANON_MAX_BYTES)),
        (BYOK, KvQuota(KV_BYOK_MAX_KEYS, KV_BYOK_MAX_BYTES)),
        (ACCOUNT, KvQuota(KV_ACCOUNT_MAX_KEYS, KV_ACCOUNT_MAX_BYTES)),
    ],
)
def test_each_scope_kind_is_held_to_its_default_quota(scope: KvScope, quota: KvQuota) -> None:
    entries = Mock(spec=KvRepository)
    service(entries).remember(scope, "k", "v")
    assert entries.put.call_args.kwargs["quota"] == quota


def test_the_x_api_key_quota_is_modest_by_default() -> None:
    assert (KV_BYOK_MAX_KEYS, KV_BYOK_MAX_BYTES) == (5_000, 50 * 1_048_576)
    assert KV_BYOK_NEW_SCOPES_PER_DAY == 5
    assert KvLimits().byok_new_scopes_per_day == KV_BYOK_NEW_SCOPES_PER_DAY


# Networks: IPv4 addresses, IPv6 /64s


@pytest.mark.parametrize(
    ("source_ip", "network"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("::ffff:203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        (" 2001:db8:1:3:a:b:c:d ", "2001:db8:1:3::/64"),
    ],
)
def test_a_client_network_is_the_ipv4_address_or_the_ipv6_64(source_ip: str, network: str) -> None:
    assert client_network(source_ip) == network


def test_anonymous_ipv6_callers_share_a_scope_per_64() -> None:
    kv = service(Mock(spec=KvRepository))
    same = {
        kv.scope_for(None, None, address)
        for address in ("2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:abcd:ef01:2345:6789")
    }
    assert len(same) == 1 and next(iter(same)).kind == "anon"
    assert kv.scope_for(None, None, "2001:db8:1:3::1") not in same
    assert kv.scope_for(None, None, "2001:db8:2:2::1") not in same
    # IPv4 stays per address, and an IPv4-mapped IPv6 address is that IPv4 address.
    assert kv.scope_for(None, None, "203.0.113.9") != kv.scope_for(None, None, "203.0.113.10")
    assert kv.scope_for(None, None, "::ffff:203.0.113.9") == kv.scope_for(None, None, "203.0.113.9")
    with pytest.raises(Unauthorized):
        kv.scope_for(None, None, None)


def test_an_x_api_key_scope_is_the_key_and_remembers_the_callers_network() -> None:
    kv = service(Mock(spec=KvRepository))
    here = kv.scope_for(None, "key", "2001:db8:1:2::1")
    there = kv.scope_for(None, "key", "198.51.100.1")
    assert here == there and here.name == there.name  # the same scope from anywhere
    assert here.network == kv.scope_for(None, "other", "2001:db8:1:2::9").network
    assert here.network != there.network
    assert kv.scope_for(None, "key", None).network is None  # no usable IP: shared bucket


def test_only_x_api_key_writes_count_against_their_networks_new_scopes() -> None:
    entries = Mock(spec=KvRepository)
    clock = FixedClock(datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC))
    kv = service(entries, KvLimits(byok_new_scopes_per_day=3), clock)
    byok = kv.scope_for(None, "key", "2001:db8:1:2::1")
    kv.remember(byok, "k", "v")
    sent = entries.put.call_args.kwargs["new_scopes"]
    assert sent == KvNewScopes(
        network=byok.network or "",
        day="2026-11-30",
        max_new=3,
        expires_at=int(datetime(2026, 12, 2, tzinfo=UTC).timestamp()),
        site=byok.site,
        site_max_new=12,
    )
    clock.set(datetime(2026, 12, 1, 0, 0, 0, tzinfo=UTC))
    kv.remember(byok, "k", "v")
    assert entries.put.call_args.kwargs["new_scopes"].day == "2026-12-01"
    for scope in (ANON, ACCOUNT):
        kv.remember(scope, "k", "v")
        assert entries.put.call_args.kwargs["new_scopes"] is None


def test_new_x_api_key_scopes_count_per_ipv6_48_as_well() -> None:
    kv = service(Mock(spec=KvRepository))
    one = kv.scope_for(None, "key", "2001:db8:1:2::1")
    other = kv.scope_for(None, "key", "2001:db8:1:ffff::1")  # another /64 of the same /48
    elsewhere = kv.scope_for(None, "key", "2001:db8:2:2::1")
    assert one.network != other.network and one.site is not None
    assert one.site == other.site != elsewhere.site
    assert kv.scope_for(None, "key", "203.0.113.9").site is None  # IPv4: its address only


def test_a_refused_new_scope_names_the_rule() -> None:
    entries = Mock(spec=KvRepository)
    entries.put.side_effect = KvNewScopesReached("full")
    with pytest.raises(KvQuotaExceeded) as refused:
        service(entries).remember(BYOK, "k", "v")
    message = refused.value.message
    assert "5 new X-Api-Key scopes per UTC day" in message and "nothing was stored" in message


@pytest.mark.parametrize(
    ("scope", "advice"),
    [(ANON, "X-Api-Key"), (BYOK, "workspace token"), (ACCOUNT, "Forget keys")],
)
def test_a_refused_write_says_which_bound_and_what_to_do(scope: KvScope, advice: str) -> None:
    entries = Mock(spec=KvRepository)
    entries.put.side_effect = KvQuotaReached(KvUsage(3, 10), 1, 5)
    limits = KvLimits(KvQuota(3, 100), KvQuota(3, 100), KvQuota(3, 100))
    with pytest.raises(KvQuotaExceeded) as keys:
        service(entries, limits).remember(scope, "k", "v")
    assert "3 of its 3 keys" in keys.value.message and advice in keys.value.message
    entries.put.side_effect = KvQuotaReached(KvUsage(2, 98), 1, 5)
    with pytest.raises(KvQuotaExceeded) as size:
        service(entries, limits).remember(scope, "k", "v")
    assert "98 of its 100 bytes" in size.value.message


def test_anonymous_values_have_a_lower_cap_than_the_others() -> None:
    entries = Mock(spec=KvRepository)
    largest = "x" * (KV_ANON_VALUE_MAX_BYTES - 2)
    service(entries).remember(ANON, "k", largest)
    with pytest.raises(PayloadTooLarge, match="anonymous"):
        service(entries).remember(ANON, "k", largest + "x")
    service(entries).remember(BYOK, "k", largest + "x")
    assert entries.put.call_count == 2
    # Raising the anonymous cap never lifts it above the global one.
    roomy = KvLimits(anon_value_max_bytes=10 * VALUE_MAX_BYTES)
    assert roomy.value_max_bytes(ANON) == VALUE_MAX_BYTES


def test_cursors_round_trip_any_key_and_refuse_everything_else() -> None:
    for key in ["a", "ключ 🎉", "x" * 512, "k:", "=="]:
        assert decode_cursor(encode_cursor(key)) == key
    assert decode_cursor(None) is None
    for bad in ["", "!!", "a", encode_cursor("a") + "=", encode_cursor("a") + "A"]:
        with pytest.raises(InvalidRequest):
            decode_cursor(bad)


def test_page_size_defaults_to_100_and_is_lowered_to_1000() -> None:
    assert (page_size(None), page_size(1), page_size(1000), page_size(10**9)) == (
        100,
        1,
        1000,
        1000,
    )
    with pytest.raises(InvalidRequest):
        page_size(0)


def test_a_page_asks_one_key_more_than_it_shows_and_counts_from_usage() -> None:
    entries = Mock(spec=KvRepository)
    entries.keys.return_value = [f"k{number:03}" for number in range(101)]
    entries.usage.return_value = KvUsage(5000, 1)
    page = service(entries).list_keys(BYOK)
    assert entries.keys.call_args.kwargs["limit"] == 101
    assert len(page.keys) == 100 and page.count == 5000
    assert decode_cursor(page.next_cursor) == "k099"
    entries.keys.return_value = ["a"]
    assert service(entries).list_keys(BYOK, encode_cursor("k099")).to_wire() == {
        "keys": ["a"],
        "count": 5000,
    }
    assert entries.keys.call_args.kwargs["after"] == "k099"


def test_a_page_stops_at_1_mib_of_keys_and_continues_with_next() -> None:
    entries = Mock(spec=KvRepository)
    # 512 control characters: 3,072 bytes each once JSON-escaped.
    keys = [f"{number:04}" + "\x01" * 508 for number in range(1000)]
    entries.keys.return_value = [*keys, "more"]
    entries.usage.return_value = KvUsage(1001, 0)
    page = service(entries).list_keys(ACCOUNT, limit=1000)
    assert 0 < len(page.keys) < 1000
    assert len(json.dumps(page.keys).encode()) <= KV_PAGE_MAX_BYTES
    assert decode_cursor(page.next_cursor) == page.keys[-1]
    assert page.to_wire()["truncated"] is True
