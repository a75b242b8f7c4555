"""Parity of the embedded server's index Query (``infra/moto_transactions.py``: each
table's items filed by index partition, kept current write by write) with stock moto
(docs/issues.md#issue-41-item-1; a stand-in gets a parity test).

A random sequence of writes (puts, updates that set, change or remove index key
attributes, deletes, batch writes, transactions, some of them failing) and Queries
(every index, both directions, paged with ``Limit`` and ``ExclusiveStartKey``, range
conditions, filters, projections) runs against two copies of a table: stock moto in one
region, the embedded server's path in another. Every answer must be the same, and so
must the tables at the end. A Query of an index partition must examine only that
partition's items, whatever else the table holds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.models.table import Table

from infra import moto_transactions
from infra.local_dynamodb import EmbeddedAWS
from tests.helpers import embedded_client

STOCK_REGION = "us-east-1"
EMBEDDED_REGION = "us-west-2"
TABLE = "index-parity"
PARTITIONS = [f"P{n}" for n in range(4)]
GROUPS = ["g0", "g1", "g2"]
HOLDERS = ["h0", "h1"]

Call = Callable[[Any], Any]


def create(client: Any, range_key: bool) -> None:
    """A table with a GSI by (g, n), a hash-only GSI by h and (with a range key) an LSI
    by (pk, n)."""
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    names = [("pk", "S"), ("g", "S"), ("h", "S"), ("n", "N")]
    extra: dict[str, Any] = {}
    if range_key:
        schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        names.append(("sk", "S"))
        extra["LocalSecondaryIndexes"] = [
            {
                "IndexName": "byLocal",
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "n", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ]
    client.create_table(
        TableName=TABLE,
        KeySchema=schema,
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in names],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byGroup",
                "KeySchema": [
                    {"AttributeName": "g", "KeyType": "HASH"},
                    {"AttributeName": "n", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": "byHolder",
                "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["v"]},
            },
        ],
        BillingMode="PAY_PER_REQUEST",
        **extra,
    )


class Script:
    """Random requests against the table (``range_key``: it has a sort key ``sk``)."""

    def __init__(self, rng: random.Random, range_key: bool) -> None:
        self.rng = rng
        self.range_key = range_key

    def key(self) -> dict[str, Any]:
        if not self.range_key:  # as many items as with a sort key, one a partition
            return {"pk": {"S": f"{self.rng.choice(PARTITIONS)}.{self.rng.randrange(6)}"}}
        return {"pk": {"S": self.rng.choice(PARTITIONS)}, "sk": {"S": f"s{self.rng.randrange(6)}"}}

    def item(self) -> dict[str, Any]:
        item = self.key()
        if self.rng.random() < 0.8:
            item["g"] = {"S": self.rng.choice(GROUPS)}
        if self.rng.random() < 0.6:
            item["h"] = {"S": self.rng.choice(HOLDERS)}
        if self.rng.random() < 0.85:
            item["n"] = {"N": str(self.rng.randrange(10))}
        item["v"] = {"S": self.rng.choice("abc")}
        if self.rng.random() < 0.2:  # big items make 1 MB pages
            item["blob"] = {"B": bytes(self.rng.choice([10, 300_000]))}
        return item

    def condition(self) -> dict[str, Any]:
        """A condition that holds or fails depending on the stored item."""
        return self.rng.choice(
            [
                {},
                {"ConditionExpression": "attribute_exists(pk)"},
                {"ConditionExpression": "attribute_not_exists(pk)"},
                {
                    "ConditionExpression": "v = :v",
                    "ExpressionAttributeValues": {":v": {"S": self.rng.choice("abc")}},
                },
            ]
        )

    def update_expression(self) -> dict[str, Any]:
        values = {
            ":g": {"S": self.rng.choice(GROUPS)},
            ":h": {"S": self.rng.choice(HOLDERS)},
            ":n": {"N": str(self.rng.randrange(10))},
            ":v": {"S": self.rng.choice("abc")},
        }
        expression = self.rng.choice(
            [
                "SET g = :g",
                "SET g = :g, n = :n",
                "REMOVE g",
                "REMOVE h SET v = :v",
                "SET h = :h",
                "REMOVE n",
                "SET v = :v",
                "SET n = :n REMOVE g",
                "SET n = n +",  # malformed: a validation error, nothing changes
            ]
        )
        used = {name: value for name, value in values.items() if name in expression}
        return {
            "UpdateExpression": expression,
            **({"ExpressionAttributeValues": used} if used else {}),
        }

    def write(self) -> Call:
        """One random write request."""
        kind = self.rng.choice(["put", "put", "update", "update", "delete", "batch", "transact"])
        if kind == "put":
            request = {"TableName": TABLE, "Item": self.item(), **self.condition()}
            return lambda client: client.put_item(**request)
        if kind == "update":
            update = {"TableName": TABLE, "Key": self.key(), **self.update_expression()}
            if "ExpressionAttributeValues" not in update and self.rng.random() < 0.5:
                update["ConditionExpression"] = "attribute_exists(pk)"
            return lambda client: client.update_item(**update)
        if kind == "delete":
            request = {"TableName": TABLE, "Key": self.key(), **self.condition()}
            return lambda client: client.delete_item(**request)
        if kind == "batch":
            writes = {}
            for _ in range(self.rng.randrange(1, 8)):
                if self.rng.random() < 0.7:
                    item = self.item()
                    writes[str(self.primary(item))] = {"PutRequest": {"Item": item}}
                else:
                    key = self.key()
                    writes[str(self.primary(key))] = {"DeleteRequest": {"Key": key}}
            batch = {TABLE: list(writes.values())}
            return lambda client: client.batch_write_item(RequestItems=batch)
        return self.transaction()

    def primary(self, item: dict[str, Any]) -> tuple[Any, ...]:
        return (item["pk"]["S"], item["sk"]["S"] if self.range_key else None)

    def transaction(self) -> Call:
        """Two to four operations on distinct items; about half fail a condition."""
        operations: dict[tuple[Any, ...], dict[str, Any]] = {}
        for _ in range(self.rng.randrange(2, 5)):
            choice = self.rng.choice(["Put", "Update", "Delete", "ConditionCheck"])
            if choice == "Put":
                item = self.item()
                body: dict[str, Any] = {"Item": item}
                key = item
            else:
                key = self.key()
                body = {"Key": key}
            if choice == "Update":
                body.update(self.update_expression())
                body.pop("ConditionExpression", None)
            elif choice == "ConditionCheck":
                body["ConditionExpression"] = self.rng.choice(
                    ["attribute_exists(pk)", "attribute_not_exists(pk)"]
                )
            elif self.rng.random() < 0.3:
                body.update(self.condition())
            operations[self.primary(key)] = {choice: {"TableName": TABLE, **body}}
        sent = list(operations.values())
        return lambda client: client.transact_write_items(TransactItems=sent)

    def query(self) -> dict[str, Any]:
        """One random Query of an index (or, rarely, of the table)."""
        choices = ["byGroup", "byGroup", "byHolder"] + (["byLocal"] if self.range_key else [])
        index = self.rng.choice([*choices, None] if self.rng.random() < 0.1 else choices)
        values: dict[str, Any] = {}
        if index == "byGroup":
            expression = "g = :g"
            values[":g"] = {"S": self.rng.choice(GROUPS)}
            if self.rng.random() < 0.5:
                expression += self.rng.choice([" AND n >= :low", " AND n BETWEEN :low AND :high"])
                values[":low"] = {"N": str(self.rng.randrange(5))}
                values[":high"] = {"N": str(self.rng.randrange(5, 10))}
        elif index == "byHolder":
            expression = "h = :h"
            values[":h"] = {"S": self.rng.choice(HOLDERS)}
        else:
            expression = "pk = :pk"
            values[":pk"] = self.key()["pk"]
        request: dict[str, Any] = {"TableName": TABLE, "KeyConditionExpression": expression}
        if index is not None:
            request["IndexName"] = index
        if self.rng.random() < 0.5:
            request["ScanIndexForward"] = False
        if self.rng.random() < 0.6:
            request["Limit"] = self.rng.randrange(1, 5)
        if self.rng.random() < 0.3:
            request["FilterExpression"] = "v <> :v"
            values[":v"] = {"S": self.rng.choice("abc")}
        if self.rng.random() < 0.2 and index != "byLocal":
            request["ProjectionExpression"] = "pk, v"
        request["ExpressionAttributeValues"] = values
        return request


def answer(client: Any, call: Call) -> Any:
    """What a request answered: the response without its metadata, or the error."""
    try:
        response = dict(call(client))
    except ClientError as error:
        return (
            error.response["Error"]["Code"],
            error.response["Error"]["Message"],
            error.response.get("CancellationReasons"),
        )
    response.pop("ResponseMetadata", None)
    return response


def pages(client: Any, request: dict[str, Any]) -> list[Any]:
    """Every page of a Query (items, counts, continuation), or the error."""
    request = dict(request)
    found = []
    while True:
        response = answer(client, lambda c: c.query(**request))
        found.append(response)
        if not isinstance(response, dict) or "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def everything(client: Any) -> list[Any]:
    items = client.scan(TableName=TABLE, ConsistentRead=True)["Items"]
    return sorted(items, key=lambda item: (item["pk"]["S"], item.get("sk", {}).get("S", "")))


@pytest.fixture
def clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    """A stock moto client and one whose requests take the embedded server's path."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        yield (
            boto3.client("dynamodb", region_name=STOCK_REGION),
            boto3.client("dynamodb", region_name=EMBEDDED_REGION),
        )


def embedded(client: Any, call: Call) -> Any:
    with moto_transactions.embedded_server_requests():
        return call(client)


@pytest.mark.parametrize(("seed", "range_key"), [(1, True), (2, True), (3, False), (4, False)])
def test_random_writes_and_index_queries_answer_as_stock_moto(
    seed: int, range_key: bool, clients: tuple[Any, Any]
) -> None:
    stock, served = clients
    rng = random.Random(seed)
    script = Script(rng, range_key)
    create(stock, range_key)
    embedded(served, lambda c: create(c, range_key))
    outcomes: set[str] = set()
    queried_items = 0
    for _ in range(160):
        if rng.random() < 0.55:
            call = script.write()
            expected = answer(stock, call)
            assert embedded(served, lambda c, call=call: answer(c, call)) == expected
            outcomes.add(expected[0] if isinstance(expected, tuple) else "ok")
        else:
            request = script.query()
            expected = pages(stock, request)
            assert embedded(served, lambda c, request=request: pages(c, request)) == expected
            queried_items += sum(page.get("Count", 0) for page in expected)
    assert embedded(served, everything) == everything(stock)
    # The sequence did what it is meant to: writes that passed, failed and were
    # cancelled, and Queries that found items.
    assert {"ok", "ConditionalCheckFailedException", "TransactionCanceledException"} <= outcomes
    assert "ValidationException" in outcomes
    assert queried_items > 50


def test_writes_outside_the_embedded_path_reach_its_index_queries(
    clients: tuple[Any, Any],
) -> None:
    _, client = clients
    create(client, True)
    query = {
        "TableName": TABLE,
        "IndexName": "byGroup",
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": {"S": "g0"}},
    }
    item = {"pk": {"S": "P0"}, "sk": {"S": "s0"}, "g": {"S": "g0"}, "n": {"N": "1"}}
    client.put_item(TableName=TABLE, Item=item)
    assert embedded(client, lambda c: c.query(**query))["Count"] == 1  # the filing is built
    # Writes on a thread that is not serving the embedded server: stock moto, seen anyway.
    client.put_item(TableName=TABLE, Item={**item, "sk": {"S": "s1"}})
    client.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "P0"}, "sk": {"S": "s0"}},
        UpdateExpression="SET g = :g",
        ExpressionAttributeValues={":g": {"S": "g1"}},
    )
    found = embedded(client, lambda c: c.query(**query))["Items"]
    assert [row["sk"]["S"] for row in found] == ["s1"]
    client.delete_item(TableName=TABLE, Key={"pk": {"S": "P0"}, "sk": {"S": "s1"}})
    assert embedded(client, lambda c: c.query(**query))["Count"] == 0
    # A stock transaction that fails puts back a copy of the whole table.
    with pytest.raises(ClientError):
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": {**item, "sk": {"S": "s2"}}}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "P9"}, "sk": {"S": "s9"}},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ]
        )
    assert embedded(client, lambda c: c.query(**query))["Count"] == 0


def test_an_index_added_later_is_queried_through_its_own_filing(
    clients: tuple[Any, Any],
) -> None:
    _, client = clients
    create(client, True)
    for number in range(6):
        item = {"pk": {"S": f"P{number}"}, "sk": {"S": "s"}, "g": {"S": "g0"}}
        client.put_item(TableName=TABLE, Item={**item, "w": {"S": f"w{number % 2}"}})
    query = {
        "TableName": TABLE,
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": {"S": "g0"}},
    }
    # byGroup needs n: no item is in it yet; the filing is built without the new index.
    assert embedded(client, lambda c: c.query(IndexName="byGroup", **query))["Count"] == 0
    embedded(
        client,
        lambda c: c.update_table(
            TableName=TABLE,
            AttributeDefinitions=[{"AttributeName": "w", "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[
                {
                    "Create": {
                        "IndexName": "byW",
                        "KeySchema": [{"AttributeName": "w", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "KEYS_ONLY"},
                    }
                }
            ],
        ),
    )
    found = embedded(
        client,
        lambda c: c.query(
            TableName=TABLE,
            IndexName="byW",
            KeyConditionExpression="w = :w",
            ExpressionAttributeValues={":w": {"S": "w1"}},
        ),
    )
    assert sorted(row["pk"]["S"] for row in found["Items"]) == ["P1", "P3", "P5"]


def examined_counts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record how many items each Query's scan of ``Table.all_items`` examines (moto's
    Query loops over what ``all_items`` returns, once per call)."""
    moto_transactions.install()
    counts: list[int] = []
    installed = Table.all_items

    def counted(self: Any) -> Any:
        items = installed(self)
        counts.append(len(items))
        return items

    monkeypatch.setattr(Table, "all_items", counted)
    return counts


def seed_partitions(client: Any, others: int) -> None:
    """Ten items in index partition g0 and ``others`` items in other index partitions."""
    requests = [
        {"pk": {"S": f"P{n}"}, "sk": {"S": "s"}, "g": {"S": "g0"}, "n": {"N": str(n)}}
        for n in range(10)
    ] + [
        {"pk": {"S": f"O{n}"}, "sk": {"S": "s"}, "g": {"S": f"o{n % 7}"}, "n": {"N": "1"}}
        for n in range(others)
    ]
    for start in range(0, len(requests), 25):
        batch = [{"PutRequest": {"Item": item}} for item in requests[start : start + 25]]
        client.batch_write_item(RequestItems={TABLE: batch})


@pytest.mark.parametrize("others", [10, 100])
def test_an_index_query_examines_only_its_index_partition(
    others: int, clients: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    stock, served = clients
    counts = examined_counts(monkeypatch)
    query = {
        "TableName": TABLE,
        "IndexName": "byGroup",
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": {"S": "g0"}},
    }
    for client in (stock, served):
        create(client, True)
        seed_partitions(client, others)
    counts.clear()
    expected = stock.query(**query)["Items"]
    assert counts == [10 + others]  # stock moto examines the whole table
    counts.clear()
    embedded(served, lambda c: seed_partitions(c, others))  # writes the filing follows
    assert embedded(served, lambda c: c.query(**query))["Items"] == expected
    assert counts == [10]  # the partition's ten items, with 10 or 100 others
    assert len(expected) == 10


def test_through_a_real_embedded_server_index_queries_follow_every_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():  # the oracle: stock moto in this thread, another region
        stock = boto3.client("dynamodb", region_name=EMBEDDED_REGION)
        server = EmbeddedAWS()
        client = embedded_client(server.start())
        try:
            rng = random.Random(7)
            script = Script(rng, True)
            create(client, True)
            create(stock, True)
            for _ in range(60):
                if rng.random() < 0.55:
                    call = script.write()
                    assert answer(client, call) == answer(stock, call)
                else:
                    request = script.query()
                    assert pages(client, request) == pages(stock, request)
            assert everything(client) == everything(stock)
        finally:
            server.stop()
