"""The capacity meter (``infra/capacity.py``, docs/operations.md#cost): DynamoDB's item-size
and capacity-unit rules on hand-computed examples, parity of the item size with the
``dynamo-size`` calculator where it follows the same rules, and the meter on moto
charging each operation as DynamoDB would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeSerializer
from botocore.exceptions import ClientError
from dynamo_size import calculate_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws

from infra.capacity import (
    CapacityMeter,
    IndexShape,
    TableShape,
    attribute_size,
    index_write_units,
    item_size,
    number_size,
    read_units,
    write_units,
)

# -- item sizes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ({"S": "abc"}, 3),
        ({"S": "é"}, 2),  # UTF-8 bytes, not characters
        ({"S": "😀"}, 4),
        ({"S": ""}, 0),
        ({"N": "0"}, 2),
        ({"N": "12345"}, 4),  # ceil(5 / 2) + 1
        ({"N": "1000"}, 2),  # trailing zeros trimmed: one significant digit
        ({"N": "0.0012"}, 2),  # leading zeros trimmed
        ({"N": "-12.50"}, 3),  # "125"
        ({"N": "1E+5"}, 2),
        ({"N": "12345678901234567890123456789012345678"}, 20),  # 38 digits
        ({"B": b"\x00\x01\x02"}, 3),  # raw bytes, not base64
        ({"BOOL": False}, 1),
        ({"NULL": True}, 1),
        ({"SS": ["a", "bc"]}, 3),
        ({"NS": ["1", "22", "333"]}, 2 + 2 + 3),
        ({"BS": [b"ab", b"c"]}, 3),
        ({"L": []}, 3),
        ({"M": {}}, 3),
        ({"L": [{"S": "ab"}, {"N": "1"}]}, 3 + (2 + 1) + (2 + 1)),
        ({"M": {"a": {"S": "xy"}}}, 3 + (1 + 2 + 1)),
        ({"M": {"é": {"L": [{"BOOL": True}]}}}, 3 + (2 + (3 + 1 + 1) + 1)),
    ],
)
def test_attribute_sizes_follow_the_item_size_rules(value: dict[str, Any], size: int) -> None:
    assert attribute_size(value) == size


def test_an_item_counts_each_name_in_utf8_plus_its_value() -> None:
    item = {"pk": {"S": "mem_1"}, "größe": {"N": "42"}, "ok": {"BOOL": True}}
    assert item_size(item) == (2 + 5) + (len("größe".encode()) + 2) + (2 + 1)
    assert item_size(None) == 0


def test_an_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown attribute type"):
        attribute_size({"X": 1})


def test_number_size_of_a_negative_fraction_with_exponent() -> None:
    assert number_size("-0.000123e-7") == 3  # "123"


# -- parity with dynamo-size -----------------------------------------------------------

_ascii = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40)
# dynamo-size counts a number's written length, DynamoDB its significant digits: the
# two agree on positive integers without trailing zeros.
_integers = st.integers(min_value=1, max_value=10**30).filter(lambda n: n % 10 != 0)
_scalars = st.one_of(_ascii, _integers, st.booleans(), st.none())
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_ascii, inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_ascii.filter(bool), _values, min_size=1, max_size=6))
def test_item_size_matches_dynamo_size_on_the_inputs_it_sizes_by_the_rules(
    item: dict[str, Any],
) -> None:
    serializer = TypeSerializer()
    wire = {name: serializer.serialize(value) for name, value in item.items()}
    assert item_size(wire) == calculate_bytes(item)


# -- units ------------------------------------------------------------------------------


def test_reads_round_up_to_4_kb_halve_when_eventual_and_double_in_a_transaction() -> None:
    assert read_units(4096, consistent=True) == 1
    assert read_units(4097, consistent=True) == 2
    assert read_units(4097, consistent=False) == 1
    assert read_units(100, consistent=False) == 0.5
    assert read_units(0, consistent=False) == 0.5  # a read of nothing still costs
    assert read_units(5000, consistent=False, transactional=True) == 4


def test_writes_round_up_to_1_kb_per_item() -> None:
    assert write_units(0) == 1
    assert write_units(1024) == 1
    assert write_units(1025) == 2


TABLE_KEYS = ("pk", "sk")
ALL = IndexShape("all", ("g",), "ALL")
KEYS = IndexShape("keys", ("g",), "KEYS_ONLY")
SOME = IndexShape("some", ("g",), "INCLUDE", frozenset({"kind"}))


def _item(g: str | None = "a", kind: str = "fact", text: str = "x") -> dict[str, Any]:
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "kind": {"S": kind}, "text": {"S": text}}
    if g is not None:
        item["g"] = {"S": g}
    return item


def test_an_index_write_costs_only_when_its_index_item_changes() -> None:
    big = "t" * 2000
    before, after = _item(text="x"), _item(text=big)
    assert index_write_units(ALL, TABLE_KEYS, before, after) == 2  # larger image, 2 KB
    assert index_write_units(KEYS, TABLE_KEYS, before, after) == 0  # text not projected
    assert index_write_units(SOME, TABLE_KEYS, before, after) == 0
    assert index_write_units(SOME, TABLE_KEYS, before, _item(kind="day")) == 1


def test_an_index_key_change_is_a_delete_and_a_put() -> None:
    assert index_write_units(KEYS, TABLE_KEYS, _item(g="a"), _item(g="b")) == 2


def test_a_sparse_index_counts_only_items_that_have_its_keys() -> None:
    assert index_write_units(ALL, TABLE_KEYS, None, _item(g=None)) == 0
    assert index_write_units(ALL, TABLE_KEYS, None, _item()) == 1  # a put into the index
    assert index_write_units(ALL, TABLE_KEYS, _item(), _item(g=None)) == 1  # a delete from it
    assert index_write_units(ALL, TABLE_KEYS, _item(), None) == 1


def test_index_items_keep_the_projected_attributes_only() -> None:
    item = _item()
    assert set(KEYS.index_item(item, TABLE_KEYS) or {}) == {"pk", "sk", "g"}
    assert set(SOME.index_item(item, TABLE_KEYS) or {}) == {"pk", "sk", "g", "kind"}
    assert ALL.index_item(item, TABLE_KEYS) == item


# -- the meter on moto ------------------------------------------------------------------

TABLE = "capacity"


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A moto table with an ALL index and a KEYS_ONLY index on ``g``."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        made = boto3.client("dynamodb", region_name="us-east-1")
        made.create_table(
            TableName=TABLE,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "g")
            ],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": name,
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": projection},
                }
                for name, projection in (("all", "ALL"), ("keys", "KEYS_ONLY"))
            ],
        )
        yield made


def _row(sk: str, size: int = 1500, g: str | None = "a") -> dict[str, Any]:
    row = {"pk": {"S": "p"}, "sk": {"S": sk}, "text": {"S": "t" * size}}
    if g is not None:
        row["g"] = {"S": g}
    return row


def test_a_put_charges_the_table_and_each_index_its_item(client: Any) -> None:
    meter = CapacityMeter(client)
    with meter.measure() as tally:
        client.put_item(TableName=TABLE, Item=_row("1"))
    # ~1.5 KB: 2 units in the table and the ALL index; the KEYS_ONLY item is tiny.
    assert tally.by_target == {"table": [0, 2], "index:all": [0, 2], "index:keys": [0, 1]}
    assert tally.write_units == 5 and tally.requests["PutItem"] == 1


def test_an_update_charges_the_larger_image_and_skips_an_unchanged_index(client: Any) -> None:
    client.put_item(TableName=TABLE, Item=_row("1", size=3000))
    meter = CapacityMeter(client)
    with meter.measure() as tally:
        client.update_item(
            TableName=TABLE,
            Key={"pk": {"S": "p"}, "sk": {"S": "1"}},
            UpdateExpression="SET #t = :t",
            ExpressionAttributeNames={"#t": "text"},
            ExpressionAttributeValues={":t": {"S": "short"}},
        )
    assert tally.by_target == {"table": [0, 3], "index:all": [0, 3]}


def test_a_failed_condition_still_costs_the_existing_item(client: Any) -> None:
    client.put_item(TableName=TABLE, Item=_row("1", size=2500))
    meter = CapacityMeter(client)
    with meter.measure() as tally, pytest.raises(ClientError):
        client.put_item(
            TableName=TABLE, Item=_row("1", size=10), ConditionExpression="attribute_not_exists(pk)"
        )
    assert tally.by_target == {"table": [0, 3]}


def test_a_delete_and_a_transaction(client: Any) -> None:
    client.put_item(TableName=TABLE, Item=_row("1"))
    meter = CapacityMeter(client)
    with meter.measure() as deleted:
        client.delete_item(TableName=TABLE, Key={"pk": {"S": "p"}, "sk": {"S": "1"}})
    assert deleted.by_target == {"table": [0, 2], "index:all": [0, 2], "index:keys": [0, 1]}
    with meter.measure() as transaction:
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": _row("2", size=100, g=None)}},
                {"Put": {"TableName": TABLE, "Item": _row("3", size=100, g=None)}},
            ]
        )
    assert transaction.by_target == {"table": [0, 4]}  # 1 unit each, doubled


def test_get_and_batch_get_round_each_item_up(client: Any) -> None:
    for sk in ("1", "2"):
        client.put_item(TableName=TABLE, Item=_row(sk, size=1500))
    meter = CapacityMeter(client)
    keys = [{"pk": {"S": "p"}, "sk": {"S": sk}} for sk in ("1", "2", "missing")]
    with meter.measure() as got:
        client.get_item(TableName=TABLE, Key=keys[0])  # eventually consistent
        client.get_item(
            TableName=TABLE, Key=keys[0], ConsistentRead=True, ProjectionExpression="pk"
        )
    assert got.read_units == 0.5 + 1
    with meter.measure() as batch:
        client.batch_get_item(RequestItems={TABLE: {"Keys": keys, "ConsistentRead": True}})
    assert batch.read_units == 3  # 1 + 1 (not one 4 KB block for both) + 1 for the miss


def test_a_query_pays_for_what_it_read_before_its_filter(client: Any) -> None:
    items = [_row(str(n), size=1500) for n in range(10)]
    client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": i}} for i in items]})
    meter = CapacityMeter(client)
    with meter.measure() as base:
        found = client.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :p",
            FilterExpression="#t = :none",
            ExpressionAttributeNames={"#t": "text"},
            ExpressionAttributeValues={":p": {"S": "p"}, ":none": {"S": "no such text"}},
            ConsistentRead=True,
        )
    assert found["Items"] == []
    size = sum(item_size(item) for item in items)
    assert base.read_units == -(-size // 4096)  # the sum rounded once, strongly consistent
    with meter.measure() as projected:
        client.query(
            TableName=TABLE,
            IndexName="keys",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": "a"}},
        )
    assert projected.by_target == {"index:keys": [0.5, 0]}  # ten tiny index items
    with meter.measure() as whole:
        client.query(
            TableName=TABLE,
            IndexName="all",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": "a"}},
            ProjectionExpression="pk",
        )
    assert whole.by_target == {"index:all": [-(-size // 4096) / 2, 0]}


def test_a_batch_write_charges_each_item_and_closing_stops_the_meter(client: Any) -> None:
    meter = CapacityMeter(client)
    rows = [_row(str(n), size=1500, g=None) for n in range(3)]
    client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": r}} for r in rows]})
    assert meter.total.by_target == {"table": [0, 6]}
    meter.close()
    client.put_item(TableName=TABLE, Item=_row("9"))
    assert meter.total.write_units == 6


def test_the_shape_comes_from_the_table_definition() -> None:
    from infra.tables import table_definition

    shape = TableShape.from_description(table_definition("t"))
    assert shape.keys == ("pk", "sk")
    assert shape.indexes["byAgentKind"].projection == "INCLUDE"
    assert shape.indexes["byWorkspaceShard"].included == frozenset({"kind"})
    assert shape.indexes["byRoutineStatus"].projection == "ALL"
