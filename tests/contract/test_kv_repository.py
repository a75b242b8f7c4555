"""The ``KvRepository`` contract (chalicelib/storage/protocols.py; docs/reference.md#10-key-value):
scoped entries, large values kept elsewhere, expiry, every page of keys.

Runs against every implementation in the ``entries`` fixture (today the DynamoDB + S3
adapter on moto, with a tiny inline limit and page size so every path, S3 pointers
and many pages, is exercised)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.kv import DynamoDBKvRepository, S3ObjectStore
from chalicelib.storage.protocols import KvRepository
from tests.helpers import BUCKET, TABLE

IMPLEMENTATIONS: dict[str, Callable[[Any, Any], KvRepository]] = {
    "dynamodb+s3": lambda dynamodb, s3: DynamoDBKvRepository(
        DynamoDBTable(dynamodb, TABLE),
        S3ObjectStore(lambda: s3, BUCKET),
        inline_max_bytes=8,
        page_size=2,
    ),
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def entries(request: pytest.FixtureRequest, dynamodb: Any, s3: Any) -> KvRepository:
    return IMPLEMENTATIONS[request.param](dynamodb, s3)


def objects(s3: Any) -> list[str]:
    return [item["Key"] for item in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def test_inline_and_s3_values_round_trip(entries: KvRepository, s3: Any) -> None:
    entries.put("byok#a", "small", "12345678", expires_at=None)
    entries.put("byok#a", "large", "123456789 ü", expires_at=None)
    assert entries.get("byok#a", "small", now=0) == "12345678"
    assert entries.get("byok#a", "large", now=0) == "123456789 ü"
    assert len(objects(s3)) == 1 and objects(s3)[0].startswith("kv/keep/")
    assert "large" not in objects(s3)[0]  # the key never appears in object names


def test_replacing_or_deleting_a_large_value_deletes_its_object(
    entries: KvRepository, s3: Any
) -> None:
    entries.put("anon#x", "k", "a large value", expires_at=100)
    first = objects(s3)
    assert len(first) == 1 and first[0].startswith("kv/anon/")
    entries.put("anon#x", "k", "another large one", expires_at=100)
    assert len(objects(s3)) == 1 and objects(s3) != first
    assert entries.delete("anon#x", "k", now=0) is True
    assert objects(s3) == []
    assert entries.delete("anon#x", "k", now=0) is False


def test_expired_entries_are_never_returned(entries: KvRepository) -> None:
    entries.put("anon#x", "k", "v", expires_at=1000)
    entries.put("anon#x", "big", "a large value", expires_at=1000)
    assert entries.get("anon#x", "k", now=999.9) == "v"
    assert entries.keys("anon#x", now=999.9) == ["big", "k"]
    assert entries.get("anon#x", "k", now=1000) is None
    assert entries.get("anon#x", "big", now=1000) is None
    assert entries.keys("anon#x", now=1000) == []
    assert entries.delete("anon#x", "k", now=1000) is False


def test_keys_follow_every_page_and_stay_in_their_scope(entries: KvRepository) -> None:
    for number in range(7):
        entries.put("account#wsp_1", f"k{number}", "v", expires_at=None)
    entries.put("account#wsp_12", "other", "v", expires_at=None)
    assert entries.keys("account#wsp_1", now=0) == [f"k{number}" for number in range(7)]
    assert entries.keys("account#wsp_12", now=0) == ["other"]


class RacingStore(S3ObjectStore):
    """An S3 store where an overwrite lands between the item read and the object read."""

    def __init__(self, s3: Any) -> None:
        super().__init__(lambda: s3, BUCKET)
        self.entries: DynamoDBKvRepository | None = None
        self.reads = 0

    def get(self, object_key: str) -> bytes | None:
        self.reads += 1
        if self.reads == 1 and self.entries is not None:
            self.entries.put("byok#a", "k", "second large value", expires_at=None)
        return super().get(object_key)


def test_a_read_racing_an_overwrite_reads_the_item_again(dynamodb: Any, s3: Any) -> None:
    store = RacingStore(s3)
    entries = DynamoDBKvRepository(DynamoDBTable(dynamodb, TABLE), store, inline_max_bytes=8)
    store.entries = entries
    entries.put("byok#a", "k", "first large value", expires_at=None)
    assert entries.get("byok#a", "k", now=0) == "second large value"
    assert store.reads == 2
