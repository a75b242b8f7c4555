"""``KvService``'s quota, value-cap and paging rules without AWS (docs/reference.md#kv-quotas,
docs/reference.md#kv-listing): the storage is a ``Mock(spec=KvRepository)``, so these
check which quota each scope kind gets, how a refusal reads, and how pages are cut."""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import Mock

import pytest

from chalicelib.errors import InvalidRequest, KvQuotaExceeded, PayloadTooLarge
from chalicelib.ids import FixedClock
from chalicelib.limits import (
    KV_ACCOUNT_MAX_BYTES,
    KV_ACCOUNT_MAX_KEYS,
    KV_ANON_MAX_BYTES,
    KV_ANON_MAX_KEYS,
    KV_ANON_VALUE_MAX_BYTES,
    KV_BYOK_MAX_BYTES,
    KV_BYOK_MAX_KEYS,
    KV_PAGE_MAX_BYTES,
    VALUE_MAX_BYTES,
)
from chalicelib.services.kv.key_pages import decode_cursor, encode_cursor, page_size
from chalicelib.services.kv.service import KvLimits, KvScope, KvService
from chalicelib.storage.protocols import KvQuota, KvQuotaReached, KvRepository, KvUsage
from tests.helpers import START

ANON = KvScope("anon", "a" * 64)
BYOK = KvScope("byok", "b" * 64)
ACCOUNT = KvScope("account", "wsp_1")


class NoSecrets:
    def find_secret(self, text: str, *, shapes_only: bool = False) -> str | None:
        return None


def service(entries: Any, limits: KvLimits | None = None) -> KvService:
    return KvService(entries, NoSecrets(), FixedClock(START), limits)


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
        "next": None,
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
