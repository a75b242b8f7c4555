"""The ``KvRepository`` contract (chalicelib/storage/protocols.py; docs/reference.md#10-key-value):
scoped entries, large values kept elsewhere, expiry, pages of keys, and each scope's usage
held within its quota (docs/reference.md#kv-quotas).

Runs against every implementation in the ``entries`` fixture (today the DynamoDB + S3
adapter on moto, with a tiny inline limit and page size so every path, S3 pointers
and many pages, is exercised)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.kv import DynamoDBKvRepository, S3ObjectStore
from chalicelib.storage.protocols import (
    KvNewScopes,
    KvNewScopesReached,
    KvQuota,
    KvQuotaReached,
    KvRepository,
    KvRevisionMismatch,
    KvUsage,
)
from tests.helpers import BUCKET, TABLE

ROOMY = KvQuota(max_keys=1000, max_bytes=1_000_000)


def put(
    entries: KvRepository,
    scope: str,
    key: str,
    value: str,
    *,
    expires_at: int | None = None,
    now: float = 0,
    quota: KvQuota = ROOMY,
    new_scopes: KvNewScopes | None = None,
) -> None:
    entries.put(
        scope, key, value, expires_at=expires_at, now=now, quota=quota, new_scopes=new_scopes
    )


def all_keys(entries: KvRepository, scope: str, now: float) -> list[str]:
    return entries.keys(scope, now=now, after=None, limit=1000)


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
    put(entries, "byok#a", "small", "12345678", expires_at=None)
    put(entries, "byok#a", "large", "123456789 ü", expires_at=None)
    assert entries.get("byok#a", "small", now=0) == "12345678"
    assert entries.get("byok#a", "large", now=0) == "123456789 ü"
    assert len(objects(s3)) == 1 and objects(s3)[0].startswith("kv/keep/")
    assert "large" not in objects(s3)[0]  # the key never appears in object names


def test_replacing_or_deleting_a_large_value_deletes_its_object(
    entries: KvRepository, s3: Any
) -> None:
    put(entries, "anon#x", "k", "a large value", expires_at=100)
    first = objects(s3)
    assert len(first) == 1 and first[0].startswith("kv/anon/")
    put(entries, "anon#x", "k", "another large one", expires_at=100)
    assert len(objects(s3)) == 1 and objects(s3) != first
    assert entries.delete("anon#x", "k", now=0) is True
    assert objects(s3) == []
    assert entries.delete("anon#x", "k", now=0) is False


def test_expired_entries_are_never_returned(entries: KvRepository) -> None:
    put(entries, "anon#x", "k", "v", expires_at=1000)
    put(entries, "anon#x", "big", "a large value", expires_at=1000)
    assert entries.get("anon#x", "k", now=999.9) == "v"
    assert all_keys(entries, "anon#x", 999.9) == ["big", "k"]
    assert entries.get("anon#x", "k", now=1000) is None
    assert entries.get("anon#x", "big", now=1000) is None
    assert all_keys(entries, "anon#x", 1000) == []
    assert entries.delete("anon#x", "k", now=1000) is False


def test_keys_follow_every_page_and_stay_in_their_scope(entries: KvRepository) -> None:
    for number in range(7):
        put(entries, "account#wsp_1", f"k{number}", "v", expires_at=None)
    put(entries, "account#wsp_12", "other", "v", expires_at=None)
    assert all_keys(entries, "account#wsp_1", 0) == [f"k{number}" for number in range(7)]
    assert all_keys(entries, "account#wsp_12", 0) == ["other"]


class RacingStore(S3ObjectStore):
    """An S3 store where an overwrite lands between the item read and the object read."""

    def __init__(self, s3: Any) -> None:
        super().__init__(lambda: s3, BUCKET)
        self.entries: DynamoDBKvRepository | None = None
        self.reads = 0

    def get(self, object_key: str) -> bytes | None:
        self.reads += 1
        if self.reads == 1 and self.entries is not None:
            put(self.entries, "byok#a", "k", "second large value", expires_at=None)
        return super().get(object_key)


def test_a_read_racing_an_overwrite_reads_the_item_again(dynamodb: Any, s3: Any) -> None:
    store = RacingStore(s3)
    entries = DynamoDBKvRepository(DynamoDBTable(dynamodb, TABLE), store, inline_max_bytes=8)
    store.entries = entries
    put(entries, "byok#a", "k", "first large value", expires_at=None)
    assert entries.get("byok#a", "k", now=0) == "second large value"
    assert store.reads == 2


# Usage and quotas (docs/reference.md#kv-quotas)


def table_items(dynamodb: Any, scope: str) -> list[str]:
    found = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"KV#{scope}"}},
        ConsistentRead=True,
    )["Items"]
    return [item["sk"]["S"] for item in found]


def test_usage_counts_keys_and_bytes_of_keys_and_values(entries: KvRepository) -> None:
    assert entries.usage("byok#u", now=0) == KvUsage(0, 0)
    put(entries, "byok#u", "ab", "xyz")
    put(entries, "byok#u", "ключ", "a large value ü")  # 8 + 16 bytes of UTF-8, in S3
    assert entries.usage("byok#u", now=0) == KvUsage(2, 5 + 24)


def test_an_overwrite_counts_the_difference_in_bytes(entries: KvRepository) -> None:
    put(entries, "byok#u", "k", "a large value")
    put(entries, "byok#u", "k", "v")
    assert entries.usage("byok#u", now=0) == KvUsage(1, 2)
    put(entries, "byok#u", "k", "twelve bytes")
    assert entries.usage("byok#u", now=0) == KvUsage(1, 13)


def test_forget_frees_its_key_and_bytes(entries: KvRepository) -> None:
    put(entries, "byok#u", "k", "a large value")
    put(entries, "byok#u", "j", "v")
    assert entries.delete("byok#u", "k", now=0) is True
    assert entries.usage("byok#u", now=0) == KvUsage(1, 2)
    assert entries.delete("byok#u", "k", now=0) is False
    assert entries.usage("byok#u", now=0) == KvUsage(1, 2)


@pytest.mark.parametrize(
    ("quota", "key", "value"),
    [
        (KvQuota(max_keys=2, max_bytes=1000), "new", "v"),  # a third key
        (KvQuota(max_keys=9, max_bytes=7), "new", "v"),  # 4 + 3 + 1 bytes > 7
        (KvQuota(max_keys=9, max_bytes=7), "a", "longer"),  # an overwrite that grows to 9
    ],
)
def test_a_write_past_the_quota_stores_nothing(
    entries: KvRepository, dynamodb: Any, s3: Any, quota: KvQuota, key: str, value: str
) -> None:
    put(entries, "byok#q", "a", "1", quota=quota)
    put(entries, "byok#q", "b", "2", quota=quota)
    with pytest.raises(KvQuotaReached) as refused:
        put(entries, "byok#q", key, value, quota=quota)
    assert refused.value.usage == KvUsage(2, 4)
    assert table_items(dynamodb, "byok#q") == ["KEY#a", "KEY#b", "USAGE"]
    assert entries.get("byok#q", "a", now=0) == "1"
    assert entries.usage("byok#q", now=0) == KvUsage(2, 4)
    assert objects(s3) == []


def test_a_large_value_past_the_quota_leaves_no_object(entries: KvRepository, s3: Any) -> None:
    with pytest.raises(KvQuotaReached):
        put(entries, "byok#q", "k", "a large value", quota=KvQuota(max_keys=9, max_bytes=5))
    assert objects(s3) == []


def test_a_full_scope_may_overwrite_in_place_and_shrink(entries: KvRepository) -> None:
    quota = KvQuota(max_keys=1, max_bytes=4)
    put(entries, "byok#q", "k", "abc", quota=quota)
    put(entries, "byok#q", "k", "xyz", quota=quota)
    put(entries, "byok#q", "k", "x", quota=KvQuota(max_keys=0, max_bytes=0))  # lowered quota
    assert entries.usage("byok#q", now=0) == KvUsage(1, 2)


def test_forgetting_frees_room_under_the_quota(entries: KvRepository) -> None:
    quota = KvQuota(max_keys=1, max_bytes=100)
    put(entries, "byok#q", "k", "v", quota=quota)
    with pytest.raises(KvQuotaReached):
        put(entries, "byok#q", "j", "v", quota=quota)
    entries.delete("byok#q", "k", now=0)
    put(entries, "byok#q", "j", "v", quota=quota)
    assert all_keys(entries, "byok#q", 0) == ["j"]


def test_expired_entries_are_counted_out_when_the_quota_is_reached(
    entries: KvRepository, dynamodb: Any
) -> None:
    quota = KvQuota(max_keys=2, max_bytes=1000)
    put(entries, "anon#e", "old", "v", expires_at=100, now=0, quota=quota)
    put(entries, "anon#e", "new", "v", expires_at=200, now=50, quota=quota)
    # "old" expired at 100 but the count still holds it (TTL deletes without telling).
    assert entries.usage("anon#e", now=150) == KvUsage(2, 8)
    put(entries, "anon#e", "third", "v", expires_at=250, now=160, quota=quota)
    assert all_keys(entries, "anon#e", 160) == ["new", "third"]
    assert table_items(dynamodb, "anon#e") == ["KEY#new", "KEY#third", "USAGE"]
    assert entries.usage("anon#e", now=160) == KvUsage(2, 10)


def test_the_usage_of_an_expiring_scope_expires_with_its_last_write(
    entries: KvRepository, dynamodb: Any
) -> None:
    put(entries, "anon#e", "a", "v", expires_at=100, now=0)
    put(entries, "anon#e", "b", "v", expires_at=150, now=50)
    usage = dynamodb.get_item(
        TableName=TABLE, Key={"pk": {"S": "KV#anon#e"}, "sk": {"S": "USAGE"}}
    )["Item"]
    assert usage["expiresAtEpoch"] == {"N": "150"}
    assert entries.usage("anon#e", now=149) == KvUsage(2, 4)
    assert entries.usage("anon#e", now=150) == KvUsage(0, 0)
    put(entries, "anon#e", "c", "v", expires_at=300, now=200)
    assert entries.usage("anon#e", now=200) == KvUsage(1, 2)
    assert table_items(dynamodb, "anon#e") == ["KEY#c", "USAGE"]


def test_a_scope_written_before_usage_was_kept_is_counted_once(
    entries: KvRepository, dynamodb: Any
) -> None:
    for key in ("a", "bb"):
        dynamodb.put_item(
            TableName=TABLE,
            Item={
                "pk": {"S": "KV#byok#old"},
                "sk": {"S": f"KEY#{key}"},
                "entity": {"S": "kv"},
                "valueBytes": {"N": "3"},
                "storedValue": {"S": "xyz"},
            },
        )
    assert entries.usage("byok#old", now=0) == KvUsage(2, 9)
    put(entries, "byok#old", "a", "x")
    assert entries.delete("byok#old", "bb", now=0) is True
    assert entries.usage("byok#old", now=0) == KvUsage(1, 2)


# New scopes per network and day (docs/reference.md#kv-quotas)


def new_scopes(network: str = "net-a", day: str = "2026-11-30", max_new: int = 2) -> KvNewScopes:
    return KvNewScopes(network=network, day=day, max_new=max_new, expires_at=2_000_000_000)


def counted(dynamodb: Any, network: str, day: str) -> int | None:
    item = dynamodb.get_item(
        TableName=TABLE,
        Key={"pk": {"S": f"KVNEW#{network}"}, "sk": {"S": f"DAY#{day}"}},
        ConsistentRead=True,
    ).get("Item")
    return None if item is None else int(item["newScopes"]["N"])


def test_a_network_starts_at_most_its_new_scopes_a_day(
    entries: KvRepository, dynamodb: Any, s3: Any
) -> None:
    put(entries, "byok#n1", "k", "v", new_scopes=new_scopes())
    put(entries, "byok#n2", "k", "a large value", new_scopes=new_scopes())
    assert counted(dynamodb, "net-a", "2026-11-30") == 2
    assert len(objects(s3)) == 1
    with pytest.raises(KvNewScopesReached):
        put(entries, "byok#n3", "k", "another large value", new_scopes=new_scopes())
    assert table_items(dynamodb, "byok#n3") == []  # no entry, no usage item
    assert entries.get("byok#n3", "k", now=0) is None
    assert len(objects(s3)) == 1  # the refused value's object was deleted
    assert counted(dynamodb, "net-a", "2026-11-30") == 2
    # Existing scopes keep growing, whatever network writes them.
    put(entries, "byok#n1", "k2", "v", new_scopes=new_scopes())
    put(entries, "byok#n2", "k2", "v", new_scopes=new_scopes("net-b"))
    assert entries.usage("byok#n1", now=0) == KvUsage(2, 5)
    assert counted(dynamodb, "net-a", "2026-11-30") == 2
    assert counted(dynamodb, "net-b", "2026-11-30") is None
    # Another network, or the next day, starts new scopes again.
    put(entries, "byok#n3", "k", "v", new_scopes=new_scopes("net-b"))
    put(entries, "byok#n4", "k", "v", new_scopes=new_scopes(day="2026-12-01"))
    assert table_items(dynamodb, "byok#n3") == ["KEY#k", "USAGE"]
    assert entries.usage("byok#n4", now=0) == KvUsage(1, 2)
    assert counted(dynamodb, "net-b", "2026-11-30") == 1
    assert counted(dynamodb, "net-a", "2026-12-01") == 1


def test_an_ipv6_site_counts_the_new_scopes_of_all_its_networks(
    entries: KvRepository, dynamodb: Any
) -> None:
    def in_site(network: str) -> KvNewScopes:
        return KvNewScopes(
            network=network,
            day="2026-11-30",
            max_new=2,
            expires_at=2_000_000_000,
            site="site-a",
            site_max_new=3,
        )

    for number, network in enumerate(("net-a", "net-b", "net-c")):
        put(entries, f"byok#s{number}", "k", "v", new_scopes=in_site(network))
    assert counted(dynamodb, "site-a", "2026-11-30") == 3
    with pytest.raises(KvNewScopesReached):
        put(entries, "byok#s9", "k", "v", new_scopes=in_site("net-d"))  # its /64 is fresh
    assert table_items(dynamodb, "byok#s9") == []
    assert counted(dynamodb, "net-d", "2026-11-30") is None  # nothing counted either
    assert counted(dynamodb, "site-a", "2026-11-30") == 3
    put(entries, "byok#s0", "k2", "v", new_scopes=in_site("net-d"))  # an existing scope


def test_a_new_scope_starts_with_its_first_entry_counted(
    entries: KvRepository, dynamodb: Any
) -> None:
    put(entries, "byok#first", "ab", "xyz", new_scopes=new_scopes())
    assert entries.usage("byok#first", now=0) == KvUsage(1, 5)
    assert entries.delete("byok#first", "ab", now=0) is True
    assert entries.usage("byok#first", now=0) == KvUsage(0, 0)
    # Emptied is not new: its usage item stays, so writing again counts nothing.
    put(entries, "byok#first", "ab", "xyz", new_scopes=new_scopes(max_new=1))
    assert counted(dynamodb, "net-a", "2026-11-30") == 1


def test_no_new_scopes_when_the_cap_is_zero_or_the_quota_too_small(
    entries: KvRepository, dynamodb: Any
) -> None:
    with pytest.raises(KvNewScopesReached):
        put(entries, "byok#z", "k", "v", new_scopes=new_scopes(max_new=0))
    with pytest.raises(KvQuotaReached):
        put(entries, "byok#z", "k", "v" * 10, quota=KvQuota(5, 5), new_scopes=new_scopes())
    assert table_items(dynamodb, "byok#z") == []
    assert counted(dynamodb, "net-a", "2026-11-30") is None


def test_a_scope_written_before_usage_was_kept_is_not_new(
    entries: KvRepository, dynamodb: Any
) -> None:
    dynamodb.put_item(
        TableName=TABLE,
        Item={
            "pk": {"S": "KV#byok#legacy"},
            "sk": {"S": "KEY#a"},
            "entity": {"S": "kv"},
            "valueBytes": {"N": "3"},
            "storedValue": {"S": "xyz"},
        },
    )
    put(entries, "byok#legacy", "b", "v", new_scopes=new_scopes(max_new=0))
    assert entries.usage("byok#legacy", now=0) == KvUsage(2, 6)


# Pages of keys


def test_keys_come_in_pages_after_a_key(entries: KvRepository) -> None:
    for key in ["b", "a", "ключ", "c", "d"]:
        put(entries, "byok#p", key, "v")
    assert entries.keys("byok#p", now=0, after=None, limit=2) == ["a", "b"]
    assert entries.keys("byok#p", now=0, after="b", limit=2) == ["c", "d"]
    assert entries.keys("byok#p", now=0, after="d", limit=2) == ["ключ"]
    assert entries.keys("byok#p", now=0, after="ключ", limit=2) == []
    assert entries.keys("byok#p", now=0, after="bz", limit=9) == ["c", "d", "ключ"]


def test_a_page_skips_expired_entries_and_stays_full(entries: KvRepository) -> None:
    for number in range(6):
        put(entries, "anon#p", f"k{number}", "v", expires_at=100 if number % 2 else 200)
    assert entries.keys("anon#p", now=150, after=None, limit=2) == ["k0", "k2"]
    assert entries.keys("anon#p", now=150, after="k2", limit=2) == ["k4"]


class InterleavingStore(S3ObjectStore):
    """An S3 store that runs another write while a large value is uploaded: between the
    write's reads and its transaction."""

    def __init__(self, s3: Any) -> None:
        super().__init__(lambda: s3, BUCKET)
        self.meanwhile: Callable[[], None] | None = None

    def put(self, object_key: str, data: bytes) -> None:
        super().put(object_key, data)
        meanwhile, self.meanwhile = self.meanwhile, None
        if meanwhile is not None:
            meanwhile()


def test_a_write_that_lost_a_race_for_its_key_counts_the_winner(dynamodb: Any, s3: Any) -> None:
    store = InterleavingStore(s3)
    entries = DynamoDBKvRepository(DynamoDBTable(dynamodb, TABLE), store, inline_max_bytes=8)
    store.meanwhile = lambda: put(entries, "byok#r", "k", "a much larger racing value")
    put(entries, "byok#r", "k", "large value")
    assert entries.get("byok#r", "k", now=0) == "large value"
    assert entries.usage("byok#r", now=0) == KvUsage(1, 1 + 11)
    assert len(objects(s3)) == 1  # the racing value's object went with its entry


def test_a_write_that_lost_the_last_room_is_refused_and_leaves_no_object(
    dynamodb: Any, s3: Any
) -> None:
    store = InterleavingStore(s3)
    entries = DynamoDBKvRepository(DynamoDBTable(dynamodb, TABLE), store, inline_max_bytes=8)
    quota = KvQuota(max_keys=1, max_bytes=1000)
    store.meanwhile = lambda: put(entries, "byok#r", "other", "v", quota=quota)
    with pytest.raises(KvQuotaReached):
        put(entries, "byok#r", "k", "large value", quota=quota)
    assert all_keys(entries, "byok#r", 0) == ["other"]
    assert entries.usage("byok#r", now=0) == KvUsage(1, 6)
    assert objects(s3) == []


# Revisions (docs/reference.md#kv-revisions)


def test_each_write_adds_one_to_the_revision_and_a_new_key_starts_at_one(
    entries: KvRepository,
) -> None:
    assert entries.read("byok#v", "k", now=0) is None
    assert entries.put("byok#v", "k", "one", expires_at=None, now=0, quota=ROOMY) == 1
    assert entries.put("byok#v", "k", "a large two", expires_at=None, now=0, quota=ROOMY) == 2
    assert entries.read("byok#v", "k", now=0) == ("a large two", 2)
    assert entries.delete("byok#v", "k", now=0)
    assert entries.put("byok#v", "k", "three", expires_at=None, now=0, quota=ROOMY) == 1


def test_a_conditional_write_names_the_revision_it_read_or_changes_nothing(
    entries: KvRepository,
) -> None:
    def write(value: str, expected: int) -> int:
        return entries.put(
            "byok#v", "k", value, expires_at=None, now=0, quota=ROOMY, expected_revision=expected
        )

    assert write("first", 0) == 1  # 0: only if absent
    with pytest.raises(KvRevisionMismatch) as absent_only:
        write("again", 0)
    assert absent_only.value.current == 1
    assert write("second", 1) == 2
    with pytest.raises(KvRevisionMismatch):
        write("stale", 1)
    with pytest.raises(KvRevisionMismatch):
        entries.delete("byok#v", "k", now=0, expected_revision=1)
    assert entries.read("byok#v", "k", now=0) == ("second", 2)
    assert entries.usage("byok#v", now=0) == KvUsage(1, 1 + 6)
    assert entries.delete("byok#v", "k", now=0, expected_revision=2)
    assert entries.read("byok#v", "k", now=0) is None


def test_an_expired_entry_is_no_entry_to_a_conditional_write(entries: KvRepository) -> None:
    entries.put("anon#v", "k", "old", expires_at=10, now=0, quota=ROOMY)
    assert (
        entries.put("anon#v", "k", "new", expires_at=100, now=20, quota=ROOMY, expected_revision=0)
        == 1
    )


class InterleavingTable(DynamoDBTable):
    """A table that runs another write before the first transaction: between a write's
    reads and its transaction, for values of any size."""

    meanwhile: Callable[[], None] | None = None

    def transact(self, operations: list[dict[str, Any]], *, attempts: int = 0) -> None:
        meanwhile, self.meanwhile = self.meanwhile, None
        if meanwhile is not None:
            meanwhile()
        super().transact(operations, attempts=attempts)


def test_two_writers_of_one_revision_cannot_both_write(dynamodb: Any, s3: Any) -> None:
    table = InterleavingTable(dynamodb, TABLE)
    entries = DynamoDBKvRepository(table, S3ObjectStore(lambda: s3, BUCKET))
    put(entries, "byok#r", "k", "v1")
    # The other writer's value has the same length: only the revision tells them apart.
    table.meanwhile = lambda: put(entries, "byok#r", "k", "v2")
    with pytest.raises(KvRevisionMismatch) as lost:
        entries.put("byok#r", "k", "v3", expires_at=None, now=0, quota=ROOMY, expected_revision=1)
    assert lost.value.current == 2
    assert entries.read("byok#r", "k", now=0) == ("v2", 2)
    table.meanwhile = lambda: put(entries, "byok#r", "k", "v4")
    with pytest.raises(KvRevisionMismatch):
        entries.delete("byok#r", "k", now=0, expected_revision=2)
    assert entries.read("byok#r", "k", now=0) == ("v4", 3)


def test_an_entry_from_before_revisions_reads_as_revision_one(dynamodb: Any, s3: Any) -> None:
    entries = IMPLEMENTATIONS["dynamodb+s3"](dynamodb, s3)
    put(entries, "byok#o", "k", "old")
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "KV#byok#o"}, "sk": {"S": "KEY#k"}},
        UpdateExpression="REMOVE kvRevision",
    )
    assert entries.read("byok#o", "k", now=0) == ("old", 1)
    assert (
        entries.put("byok#o", "k", "new", expires_at=None, now=0, quota=ROOMY, expected_revision=1)
        == 2
    )
